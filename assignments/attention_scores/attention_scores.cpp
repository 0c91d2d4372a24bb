// exercise: attention_scores
// The backward of attention scores S = Q K^T / sqrt(d). Read statement.md first.
// Grade it with:  autograd grade assignments/attention_scores/attention_scores.cpp
#include "assignments/attention_scores/attention_scores.h"

#include <cmath>

AttentionScoresGrads attention_scores_backward(const arma::mat& Q, const arma::mat& K, const arma::mat& dS) {
  AttentionScoresGrads g;
  // TODO 1: dQ (N x d). S_ij = sum_k Q_ik K_jk / sqrt(d). Which product of dS (N x M) and K (M x d) is N x d?
  // TODO 2: dK (M x d). Which product of dS and Q is M x d?
  // TODO 3: the scale 1 / sqrt(d) (d = Q.n_cols) is a constant factor of both.
  g.dQ.zeros(arma::size(Q));
  g.dK.zeros(arma::size(K));
  (void)dS;
  return g;
}
