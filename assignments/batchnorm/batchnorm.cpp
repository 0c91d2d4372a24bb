// exercise: batchnorm
// The BatchNorm backward (training mode). Read statement.md in this folder first.
// Grade it with:  autograd grade assignments/batchnorm/batchnorm.cpp
#include "assignments/batchnorm/batchnorm.h"

BatchNormGrads batchnorm_backward(const arma::mat& x, const arma::mat& gamma, const arma::mat& dy, double eps) {
  BatchNormGrads g;
  // Done for you, as an example: beta was added to every row, so its gradient is dy summed down the rows.
  g.dbeta = arma::sum(dy, 0);

  // TODO 1: per column, mean (1 x D), rstd = 1 / sqrt(var + eps) (biased: divide by N), xhat (N x D).
  // TODO 2: dgamma (1 x D) = sum down the rows of dy * xhat.
  // TODO 3: dxhat = dy * gamma, then per column
  //         dx = rstd / N * (N * dxhat - sum(dxhat) - xhat * sum(dxhat * xhat)), sums down the rows.
  g.dgamma.zeros(arma::size(gamma));
  g.dx.zeros(arma::size(x));
  (void)eps;
  return g;
}
