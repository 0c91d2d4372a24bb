// Reference solution: LayerNorm backward, the three-term formula.
#include "assignments/layernorm/layernorm.h"

LayerNormGrads layernorm_backward(const arma::mat& x, const arma::mat& gamma, const arma::mat& dy, double eps) {
  const arma::mat centred = x.each_col() - arma::mean(x, 1);
  const arma::vec rstd = 1.0 / arma::sqrt(arma::mean(arma::square(centred), 1) + eps);
  const arma::mat xhat = centred.each_col() % rstd;
  arma::mat dxhat = dy;
  dxhat.each_row() %= gamma;

  LayerNormGrads g;
  g.dbeta = arma::sum(dy, 0);
  g.dgamma = arma::sum(dy % xhat, 0);
  // dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)), means per row
  arma::mat dx = dxhat.each_col() - arma::mean(dxhat, 1);
  dx -= xhat.each_col() % arma::mean(dxhat % xhat, 1);
  g.dx = dx.each_col() % rstd;
  return g;
}
