// Reference solution: dlogits = dloss * (softmax(z) - onehot(labels)) / N.
#include "assignments/log_softmax_ce/log_softmax_ce.h"

arma::mat log_softmax_ce_backward(const arma::mat& logits, const arma::uvec& labels, double dloss) {
  const arma::mat shifted = logits.each_col() - arma::max(logits, 1);  // exp never overflows
  const arma::mat e = arma::exp(shifted);
  arma::mat dlogits = e.each_col() / arma::sum(e, 1);
  for (arma::uword i = 0; i < logits.n_rows; ++i) dlogits(i, labels(i)) -= 1.0;
  return dlogits * (dloss / double(logits.n_rows));
}
