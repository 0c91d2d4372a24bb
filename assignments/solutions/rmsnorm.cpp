// Reference solution: RMSNorm backward, two terms (no mean is subtracted in the forward).
#include "assignments/rmsnorm/rmsnorm.h"

RMSNormGrads rmsnorm_backward(const arma::mat& x, const arma::mat& gamma, const arma::mat& dy, double eps) {
  const arma::vec rrms = 1.0 / arma::sqrt(arma::mean(arma::square(x), 1) + eps);
  const arma::mat xhat = x.each_col() % rrms;
  arma::mat dxhat = dy;
  dxhat.each_row() %= gamma;

  RMSNormGrads g;
  g.dgamma = arma::sum(dy % xhat, 0);
  // dx = rrms * (dxhat - xhat * mean(dxhat * xhat)), mean per row
  arma::mat dx = dxhat - (xhat.each_col() % arma::mean(dxhat % xhat, 1));
  g.dx = dx.each_col() % rrms;
  return g;
}
