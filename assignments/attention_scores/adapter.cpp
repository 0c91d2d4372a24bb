// The bridge between the grader and the student's attention_scores_backward (trusted; built into
// the child). The grader's forward is the op table's matmul, y = Q Kt, with Kt = K^T (D x M) and a
// random dy. The scores are S = y / sqrt(D), so the loss sum(dy y) is sum(dS S) with
// dS = sqrt(D) dy: the student is handed K and that dS, and returns dL/dQ, which is the grader's dQ
// as it is, and dL/dK, whose transpose is the grader's dKt. Nothing else is changed.
#include <cmath>
#include <stdexcept>
#include <string>

#include "assignments/kit/child.h"
#include "assignments/attention_scores/attention_scores.h"

namespace {

std::string shape(const arma::mat& m) { return std::to_string(m.n_rows) + "x" + std::to_string(m.n_cols); }

}  // namespace

std::vector<arma::mat> kit_child::answer(const std::vector<arma::mat>& sent) {  // Q, Kt, dy
  const arma::mat& Q = sent.at(0);
  const arma::mat K = sent.at(1).t();
  const arma::mat dS = sent.at(2) * std::sqrt(double(Q.n_cols));
  const AttentionScoresGrads g = attention_scores_backward(Q, K, dS);
  // The grader sees dK transposed: a wrong shape is named here, in the student's terms.
  if (g.dK.n_rows != K.n_rows || g.dK.n_cols != K.n_cols) {
    const bool transposed = g.dK.n_rows == K.n_cols && g.dK.n_cols == K.n_rows;
    throw std::runtime_error("your dK is " + shape(g.dK) + ", but K is " + shape(K) +
                             " and a gradient has its input's shape" +
                             (transposed ? " (yours is transposed: check the order of the product)" : ""));
  }
  return {g.dQ, g.dK.t()};
}
