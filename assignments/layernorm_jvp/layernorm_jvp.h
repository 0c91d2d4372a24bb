// Exercise: the LayerNorm JVP, forward mode (statement.md in this folder).
#pragma once

#include <armadillo>

// y = (x - mean) / sqrt(var + eps) * gamma + beta per row (kit::layernorm_forward); x is N x D,
// gamma and beta are 1 x D. Return dy (N x D), the tangent of y when x, gamma and beta move
// along dx (N x D), dgamma and dbeta (1 x D): dy = J_x dx + J_gamma dgamma + J_beta dbeta.
arma::mat layernorm_jvp(const arma::mat& x, const arma::mat& gamma, const arma::mat& beta, const arma::mat& dx,
                        const arma::mat& dgamma, const arma::mat& dbeta, double eps);
