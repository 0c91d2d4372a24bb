// Every differentiable op, in one include.
#pragma once

#include "ops/elementwise.h"
#include "ops/linalg.h"
#include "ops/reduce.h"
