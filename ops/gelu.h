// GELU, tanh approximation (Hendrycks & Gimpel 2016; GPT-2, PyTorch approximate="tanh"):
//   y = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
// written twice, like LayerNorm: `gelu` composed from primitive ops, so the
// tape derives its gradient (the lesson's version: eight nodes of pow_scalar,
// mul_scalar, add, tanh, add_scalar and mul, each saving what its backward reads),
// and `gelu_fused`, one node with a handwritten backward that saves only x
// and recomputes the rest. The fused op writes the gate 0.5 (1 + tanh u) as
// 1 / (1 + exp(-2u)), the same function in one exp (tanh: 2.6x the time), x^3 as
// x * x * x: it is within 1.8e-15 of the composed value and 4.9e-15 of its
// gradient, which is itself the less accurate of the two against long double
// (5.4e-15 vs 2.2e-16; tests/test_gelu.cpp measures both).
//
// Large |x|: from x ~ 7.3 on (u > 19.5) the gate is exactly 1, y = x, dx = 1,
// in both versions. For negative x the composed y is exactly -0 from -7.3 on
// (1 + tanh u cancels), the fused y tends to 0 (-1.2e-37 at -10) and is -0
// from -21 on. x^3 overflows to inf from |x| ~ 6e102 on, harmlessly; both
// gradients stay finite until x^2 overflows too (|x| ~ 1.3e154): 0 * inf is NaN.
#pragma once

#include "autograd/tape.h"

namespace ag {

Var gelu(Var x);
Var gelu_fused(Var x);

// What each is (autograd/tape.h's OpDef), defined beside it in gelu.cpp.
const OpDef& gelu_def();
const OpDef& gelu_fused_def();

}  // namespace ag
