// Composed vs fused LayerNorm (or RMSNorm) at second order: the Hessian-vector
// product of the loss L = <dy, norm(x, gamma, beta)> along one random direction
// (v_x, v_gamma, v_beta), through each path by reverse-over-forward, against
// the central difference of the composed gradient along v. The fused node's
// JVP is handwritten (ops/layernorm.cpp), the composed one is the JVPs of its
// primitives: their agreement to rounding is the second-order evidence that
// the fused rule is right.
#pragma once

#include <cstdint>

#include "check/norm_compare.h"

namespace ag {

struct NormHvp {
  arma::vec composed, fused, numeric;  // H v over (x, gamma[, beta]) joined, column by column
  double composed_fused_rel = 0;       // max |a - b| / max(max |a|, max |b|)
  double composed_numeric_rel = 0;
  double fused_numeric_rel = 0;
  double transpose_rel = 0;            // the fused node's transpose identity (check/forward_check.h)
};

// v is drawn from `seed` (uniform in [-1, 1]); finite differences with eps 1e-5.
NormHvp compare_norm_hvp(const NormInputs& in, std::uint64_t seed);

}  // namespace ag
