// Reference solution: S = Q K^T / sqrt(d).  dQ = dS K / sqrt(d),  dK = dS^T Q / sqrt(d).
#include "assignments/attention_scores/attention_scores.h"

#include <cmath>

AttentionScoresGrads attention_scores_backward(const arma::mat& Q, const arma::mat& K, const arma::mat& dS) {
  const double scale = 1.0 / std::sqrt(double(Q.n_cols));
  AttentionScoresGrads g;
  g.dQ = scale * dS * K;
  g.dK = scale * dS.t() * Q;
  return g;
}
