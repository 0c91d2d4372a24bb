// Reference solution: the LayerNorm JVP, dy = gamma dxhat + dgamma xhat + dbeta.
#include "assignments/layernorm_jvp/layernorm_jvp.h"

arma::mat layernorm_jvp(const arma::mat& x, const arma::mat& gamma, const arma::mat& /*beta*/, const arma::mat& dx,
                        const arma::mat& dgamma, const arma::mat& dbeta, double eps) {
  const arma::mat centred = x.each_col() - arma::mean(x, 1);
  const arma::vec rstd = 1.0 / arma::sqrt(arma::mean(arma::square(centred), 1) + eps);
  const arma::mat xhat = centred.each_col() % rstd;

  // dxhat = rstd * (dx - mean(dx) - xhat * mean(xhat * dx)), means per row
  arma::mat dxhat = dx.each_col() - arma::mean(dx, 1);
  dxhat -= xhat.each_col() % arma::mean(xhat % dx, 1);
  dxhat.each_col() %= rstd;

  arma::mat dy = dxhat.each_row() % gamma;  // gamma * dxhat
  arma::mat dgamma_term = xhat;
  dgamma_term.each_row() %= dgamma;         // dgamma * xhat
  dy += dgamma_term;
  dy.each_row() += dbeta;                   // dbeta, on every row
  return dy;
}
