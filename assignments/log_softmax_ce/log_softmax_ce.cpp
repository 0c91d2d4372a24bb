// exercise: log_softmax_ce
// The backward of the mean softmax cross-entropy. Read statement.md in this folder first.
// Grade it with:  autograd grade assignments/log_softmax_ce/log_softmax_ce.cpp
#include "assignments/log_softmax_ce/log_softmax_ce.h"

arma::mat log_softmax_ce_backward(const arma::mat& logits, const arma::uvec& labels, double dloss) {
  arma::mat dlogits(arma::size(logits), arma::fill::zeros);
  // TODO 1: p = softmax(logits), row by row; subtract each row's maximum before exp.
  // TODO 2: subtract 1 at (i, labels(i)) in every row i: p - onehot(labels).
  // TODO 3: scale by dloss / N, N the number of rows (the loss is a mean over the rows).
  (void)labels;
  (void)dloss;
  return dlogits;
}
