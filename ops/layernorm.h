// LayerNorm and RMSNorm, each written twice, and BatchNorm composed.
//
// *_composed are built only from public primitive ops (mean, var, sqrt, div,
// mul, add ...) with no backward code of their own: the tape derives the
// gradient. *_fused are one tape node each with a handwritten backward. Both
// normalise each row (one sample/token per row, features across columns).
#pragma once

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

}  // namespace ag
