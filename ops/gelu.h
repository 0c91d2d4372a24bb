// GELU, tanh approximation (Hendrycks & Gimpel 2016; GPT-2, PyTorch approximate="tanh"):
//   y = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
// composed from primitive ops, so the tape derives its gradient.
#pragma once

#include "autograd/tape.h"

namespace ag {

Var gelu(Var x);

}  // namespace ag
