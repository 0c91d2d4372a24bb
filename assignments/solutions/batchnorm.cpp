// Reference solution: BatchNorm backward (training mode), the cs231n formula, per column.
#include "assignments/batchnorm/batchnorm.h"

BatchNormGrads batchnorm_backward(const arma::mat& x, const arma::mat& gamma, const arma::mat& dy, double eps) {
  const double n = double(x.n_rows);
  const arma::mat centred = x.each_row() - arma::mean(x, 0);
  const arma::rowvec rstd = 1.0 / arma::sqrt(arma::mean(arma::square(centred), 0) + eps);
  const arma::mat xhat = centred.each_row() % rstd;
  arma::mat dxhat = dy;
  dxhat.each_row() %= gamma;

  BatchNormGrads g;
  g.dbeta = arma::sum(dy, 0);
  g.dgamma = arma::sum(dy % xhat, 0);
  // dx = rstd / N * (N dxhat - sum(dxhat) - xhat * sum(dxhat * xhat)), sums down each column
  arma::mat dx = n * dxhat;
  dx.each_row() -= arma::sum(dxhat, 0);
  dx -= xhat.each_row() % arma::sum(dxhat % xhat, 0);
  g.dx = dx.each_row() % (rstd / n);
  return g;
}
