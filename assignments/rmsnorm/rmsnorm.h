// Exercise: the RMSNorm backward (statement.md in this folder).
#pragma once

#include <armadillo>

struct RMSNormGrads {
  arma::mat dx;      // N x D
  arma::mat dgamma;  // 1 x D
};

// y = x / sqrt(mean(x^2) + eps) * gamma per row (kit::rmsnorm_forward);
// x and dy = dL/dy are N x D, gamma is 1 x D. Return dL/dx and dL/dgamma.
RMSNormGrads rmsnorm_backward(const arma::mat& x, const arma::mat& gamma, const arma::mat& dy, double eps);
