// Exercise: the BatchNorm backward, training mode (statement.md in this folder).
#pragma once

#include <armadillo>

struct BatchNormGrads {
  arma::mat dx;      // N x D
  arma::mat dgamma;  // 1 x D
  arma::mat dbeta;   // 1 x D
};

// y = (x - mean) / sqrt(var + eps) * gamma + beta per COLUMN, over the N rows of the
// batch (ag::batchnorm_composed); x and dy = dL/dy are N x D, gamma is 1 x D.
// Return dL/dx, dL/dgamma, dL/dbeta.
BatchNormGrads batchnorm_backward(const arma::mat& x, const arma::mat& gamma, const arma::mat& dy, double eps);
