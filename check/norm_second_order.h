// Composed vs fused LayerNorm (or RMSNorm) at second order: the Hessian-vector
// product of the loss L = <dy, norm(x, gamma, beta)> along one random direction
// (v_x, v_gamma, v_beta), through each path by reverse-over-forward, against
// the central difference of the composed gradient along v. The fused node's
// JVP is handwritten (ops/layernorm.cpp), the composed one is the JVPs of its
// primitives: their agreement to rounding is the second-order evidence that
// the fused rule is right.
#pragma once

#include <cstdint>
#include <string>

#include "check/norm_compare.h"

namespace ag {

struct NormHvp {
  arma::vec composed, fused, numeric;  // H v over (x, gamma[, beta]) joined, column by column
  double composed_fused_rel = 0;       // max |a - b| / max(max |a|, max |b|)
  double composed_numeric_rel = 0;
  double fused_numeric_rel = 0;
  double transpose_rel = 0;            // the fused node's transpose identity (check/forward_check.h)

  // Composed and fused agree to rounding; each agrees with finite differences
  // to their resolution (a relative step of 1e-5: truncation ~1e-10, rounding
  // ~1e-11); the transpose identity holds to rounding.
  static constexpr double kComposedFused = 1e-9, kNumeric = 1e-5, kTranspose = 1e-12;
  // "" when every pair agrees; else the first pair that does not, with its numbers.
  std::string disagreement() const;
};

// v is drawn from `seed` (uniform in [-1, 1]) and scaled to each input's own
// scale (x's rows by sqrt(var + eps), gamma and beta by their largest
// magnitude, at least 1), so the finite differences' step, 1e-5 along v, is
// relative to what it moves.
NormHvp compare_norm_hvp(const NormInputs& in, std::uint64_t seed);

}  // namespace ag
