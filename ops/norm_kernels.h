// The fused LayerNorm and RMSNorm kernels, on plain matrices (no tape):
// ops/layernorm.cpp records them as one node each, and `autograd bench`
// times them alone to tell the kernel's cost from the tape's.
//
// Outputs are resized only when their shape differs, so a caller that passes
// the same y and dx every time reuses their memory.
#pragma once

#include <armadillo>

namespace ag::kernels {

struct NormGrads {
  arma::mat dx, dgamma, dbeta;  // dx left empty when x needs no gradient; dgamma, dbeta 1 x D, added into
};

// y = xhat * gamma + beta per row, xhat = (x - mean) * rstd; fills mean and rstd (N each).
void layernorm_forward(const arma::mat& x, const arma::mat& gamma, const arma::mat& beta, double eps,
                       arma::vec& mean, arma::vec& rstd, arma::mat& y);
// Adds dgamma and dbeta into g; writes g.dx (already N x D) unless it is empty.
void layernorm_backward(const arma::mat& x, const arma::mat& gamma, const arma::mat& dout,
                        const arma::vec& mean, const arma::vec& rstd, NormGrads& g);

// y = xhat * gamma per row, xhat = x * rstd, rstd = 1 / sqrt(mean(x^2) + eps); fills rstd.
void rmsnorm_forward(const arma::mat& x, const arma::mat& gamma, double eps, arma::vec& rstd, arma::mat& y);
void rmsnorm_backward(const arma::mat& x, const arma::mat& gamma, const arma::mat& dout,
                      const arma::vec& rstd, NormGrads& g);

// The specification the kernels are held to: the same four functions as
// llm.c's plain loops, row by row (slow: each row strides across the columns).
namespace spec {
void layernorm_forward(const arma::mat& x, const arma::mat& gamma, const arma::mat& beta, double eps,
                       arma::vec& mean, arma::vec& rstd, arma::mat& y);
void layernorm_backward(const arma::mat& x, const arma::mat& gamma, const arma::mat& dout,
                        const arma::vec& mean, const arma::vec& rstd, NormGrads& g);
void rmsnorm_forward(const arma::mat& x, const arma::mat& gamma, double eps, arma::vec& rstd, arma::mat& y);
void rmsnorm_backward(const arma::mat& x, const arma::mat& gamma, const arma::mat& dout,
                      const arma::vec& rstd, NormGrads& g);
}  // namespace spec

}  // namespace ag::kernels
