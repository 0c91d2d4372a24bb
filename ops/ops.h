// Every differentiable op, in one include: the primitives (one node each),
// the fused norms and softmax, picking, cutting and joining (embedding, rows,
// cols, hcat, vcat, masked_fill, dropout), and the functions composed from
// them (GELU, the losses, the composed norms and softmax).
#pragma once

#include "ops/elementwise.h"
#include "ops/gelu.h"
#include "ops/indexing.h"
#include "ops/layernorm.h"
#include "ops/linalg.h"
#include "ops/losses.h"
#include "ops/reduce.h"
#include "ops/softmax.h"
