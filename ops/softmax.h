// Softmax and log-softmax along a dim (1 = across each row, as attention and
// a language model's logits need; 0 = down each column), written twice like
// LayerNorm: composed from public primitives (the tape derives the gradient)
// and fused into one node with a handwritten backward that saves only its
// output.
//
// Max-shifted, so logits 1e3 apart stay finite; -inf entries (a masked row)
// get probability 0 and no gradient. A row of only -inf has no distribution:
// NaN, PyTorch's answer, and anomaly mode names the node. The composed
// versions hold x - logsumexp(x) = -inf there, so anomaly mode stops them.
#pragma once

#include "autograd/tape.h"

namespace ag {

// softmax(x)_i = exp(x_i - logsumexp(x)): exp and logsumexp nodes, no backward code.
Var softmax_composed(Var x, int dim);
// log_softmax(x)_i = x_i - logsumexp(x).
Var log_softmax_composed(Var x, int dim);

// One node; saves y. dx = y * (dy - sum(dy * y)).
Var softmax(Var x, int dim);
// One node; saves y. dx = dy - exp(y) * sum(dy).
Var log_softmax(Var x, int dim);

// What each is (autograd/tape.h's OpDef), one per dim, defined beside it in softmax.cpp.
const OpDef& softmax_composed_def(int dim);
const OpDef& log_softmax_composed_def(int dim);
const OpDef& softmax_def(int dim);
const OpDef& log_softmax_def(int dim);

}  // namespace ag
