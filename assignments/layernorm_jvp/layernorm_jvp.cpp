// exercise: layernorm_jvp
// The LayerNorm JVP (forward mode). Read statement.md in this folder first.
// Grade it with:  autograd grade assignments/layernorm_jvp/layernorm_jvp.cpp
#include "assignments/layernorm_jvp/layernorm_jvp.h"

arma::mat layernorm_jvp(const arma::mat& x, const arma::mat& gamma, const arma::mat& beta, const arma::mat& dx,
                        const arma::mat& dgamma, const arma::mat& dbeta, double eps) {
  // Done for you, as an example: beta is added to every row, so its tangent dbeta is added to
  // every row of dy (a 1 x D tangent broadcast to N x D).
  arma::mat dy(arma::size(x), arma::fill::zeros);
  dy.each_row() += dbeta;

  // TODO 1: recompute the forward's per-row statistics: mean (N x 1), rstd = 1 / sqrt(var + eps)
  //         (biased variance: divide by D), and xhat = (x - mean) * rstd (N x D).
  // TODO 2: the dgamma term: gamma multiplies xhat, so add dgamma * xhat (each row times dgamma).
  // TODO 3: the dx term: dxhat = rstd * (dx - mean(dx) - xhat * mean(xhat * dx)), means per row;
  //         add gamma * dxhat (each row times gamma).
  (void)gamma;
  (void)beta;
  (void)dx;
  (void)dgamma;
  (void)eps;
  return dy;
}
