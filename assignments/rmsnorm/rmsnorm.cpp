// exercise: rmsnorm
// The RMSNorm backward. Read statement.md in this folder first.
// Grade it with:  autograd grade assignments/rmsnorm/rmsnorm.cpp
#include "assignments/rmsnorm/rmsnorm.h"

RMSNormGrads rmsnorm_backward(const arma::mat& x, const arma::mat& gamma, const arma::mat& dy, double eps) {
  RMSNormGrads g;
  // TODO 1: per row, rrms = 1 / sqrt(mean(x^2) + eps) (N x 1), and xhat = x * rrms (N x D).
  // TODO 2: dgamma (1 x D) = dy * xhat summed down the rows.
  // TODO 3: dxhat = dy * gamma, then dx = rrms * (dxhat - xhat * mean(dxhat * xhat)), mean per row.
  //         (Only two terms: RMSNorm subtracts no mean, so the "- mean(dxhat)" term of LayerNorm is gone.)
  g.dgamma.zeros(arma::size(gamma));
  g.dx.zeros(arma::size(x));
  (void)dy;
  (void)eps;
  return g;
}
