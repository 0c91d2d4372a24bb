// Reductions. `dim` follows PyTorch, with the result kept 2-D (keepdim):
//   dim = 1 (or -1): across each row's columns  -> N x 1  (per sample/token: LayerNorm)
//   dim = 0 (or -2): down each column's rows    -> 1 x D  (per feature: BatchNorm)
//   no dim:          over everything            -> 1 x 1
#pragma once

#include "autograd/tape.h"

namespace ag {

Var sum(Var a);
Var sum(Var a, int dim);
Var mean(Var a);
Var mean(Var a, int dim);

// Variance, biased (divide by n) by default as LayerNorm needs; unbiased divides by n-1.
// Two-pass: mean first, then the mean of squared differences, so a large offset
// does not cancel the way E[x^2] - E[x]^2 does.
Var var(Var a, int dim, bool unbiased = false);

// Largest value along dim; the gradient goes to the first maximum.
Var max(Var a, int dim);

// log(sum(exp(a))) along dim, computed as m + log(sum(exp(a - m))) so it never overflows.
Var logsumexp(Var a, int dim);

// What each reduction is (autograd/tape.h's OpDef), defined beside it in
// reduce.cpp; along a dim there is one def per dim (its node's name says it:
// "sum(dim=1)"), and a dim other than 0, 1, -1, -2 throws.
const OpDef& sum_def();
const OpDef& mean_def();
const OpDef& sum_def(int dim);
const OpDef& mean_def(int dim);
const OpDef& var_def(int dim, bool unbiased = false);
const OpDef& max_def(int dim);
const OpDef& logsumexp_def(int dim);

// 0 or 1 for a valid dim (accepts -1 and -2); throws naming `op` otherwise.
int normalize_dim(const char* op, int dim);

}  // namespace ag
