// Reference solution: Y = X W + b.  dX = dY W^T,  dW = X^T dY,  db = dY summed down the rows.
#include "assignments/matmul_bias/matmul_bias.h"

LinearGrads linear_backward(const arma::mat& X, const arma::mat& W, const arma::mat& dY) {
  LinearGrads g;
  g.dX = dY * W.t();
  g.dW = X.t() * dY;
  g.db = arma::sum(dY, 0);
  return g;
}
