// Matrix product and transpose (matmul goes through BLAS via Armadillo).
#pragma once

#include "autograd/tape.h"

namespace ag {

Var matmul(Var a, Var b);  // (N x K) @ (K x M) -> N x M
Var transpose(Var a);      // (N x D) -> D x N

// What each op is (autograd/tape.h's OpDef), defined beside it in linalg.cpp.
const OpDef& matmul_def();
const OpDef& transpose_def();

}  // namespace ag
