// LayerNorm and RMSNorm, each written twice, and BatchNorm composed.
//
// *_composed are built only from public primitive ops (mean, sub, square,
// add_scalar, sqrt, div, mul, add) with no backward code of their own: the
// tape derives the gradient. *_fused are one tape node each with a handwritten
// backward that saves only the per-row mean and rstd (plus references to x and
// gamma). Both normalise each row (one sample/token per row, features across
// columns); BatchNorm normalises each column (over the batch) instead.
//
// Errors (ag::Error, naming the op and the shapes): gamma/beta not 1 x D,
// eps not > 0, LayerNorm with D < 2 (a one-feature row has no spread),
// BatchNorm with N < 2.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "autograd/tape.h"

namespace ag {

// y = (x - mean) / sqrt(var + eps) * gamma + beta, per row; biased var.
// x: N x D, gamma and beta: 1 x D.
Var layernorm_composed(Var x, Var gamma, Var beta, double eps = 1e-5);
Var layernorm_fused(Var x, Var gamma, Var beta, double eps = 1e-5);

// y = x / sqrt(mean(x^2) + eps) * gamma, per row. gamma: 1 x D.
Var rmsnorm_composed(Var x, Var gamma, double eps = 1e-5);
Var rmsnorm_fused(Var x, Var gamma, double eps = 1e-5);

// Training-mode BatchNorm: the same normalisation down each column (over the batch).
Var batchnorm_composed(Var x, Var gamma, Var beta, double eps = 1e-5);

// The composed versions step by step, for display (`autograd layernorm`):
// each named intermediate is a Var on the tape, in the order it was computed,
// e.g. {"mean", N x 1}, {"x - mean", N x D}, ... and finally y.
struct NormSteps {
  std::vector<std::pair<std::string, Var>> steps;
  Var y;
};
NormSteps layernorm_composed_steps(Var x, Var gamma, Var beta, double eps = 1e-5);
NormSteps rmsnorm_composed_steps(Var x, Var gamma, double eps = 1e-5);

}  // namespace ag
