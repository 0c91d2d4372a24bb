// Every differentiable op, in one include: the primitives (one node each),
// the fused norms, and the functions composed from them (GELU, the losses).
#pragma once

#include "ops/elementwise.h"
#include "ops/gelu.h"
#include "ops/layernorm.h"
#include "ops/linalg.h"
#include "ops/losses.h"
#include "ops/reduce.h"
