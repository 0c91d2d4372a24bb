// exercise: layernorm
// The LayerNorm backward. Read statement.md in this folder first.
// Grade it with:  autograd grade assignments/layernorm/layernorm.cpp
#include "assignments/layernorm/layernorm.h"

LayerNormGrads layernorm_backward(const arma::mat& x, const arma::mat& gamma, const arma::mat& dy, double eps) {
  LayerNormGrads g;
  // Done for you, as an example: beta was added to every row (broadcast over
  // the rows), so its gradient is dy summed down the rows.
  g.dbeta = arma::sum(dy, 0);

  // TODO 1: recompute the forward's per-row statistics: mean (N x 1), rstd = 1 / sqrt(var + eps)
  //         (biased variance: divide by D), and xhat = (x - mean) * rstd (N x D).
  // TODO 2: dgamma (1 x D): gamma multiplied every row, so sum dy * xhat down the rows.
  // TODO 3: dxhat = dy * gamma (each row times gamma), then the three-term formula
  //         dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)), means taken per row.
  g.dgamma.zeros(arma::size(gamma));
  g.dx.zeros(arma::size(x));
  (void)eps;
  return g;
}
