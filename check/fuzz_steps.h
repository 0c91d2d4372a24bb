// Inside the fuzzer (check/fuzz.h): recording and evaluating one graph step.
// A step names a row of the op table (check/op_table.h) or a custom op; the
// row's domains say which values its inputs may hold, so finite differences
// are meaningful.
#pragma once

#include <vector>

#include "check/fuzz.h"

namespace ag::fuzz_detail {

// Largest magnitude a drawn op may produce (the final sums may reach kMaxValue):
// keeps the rounding error of finite differences far below gradcheck's atol.
constexpr double kMaxMagnitude = 100.0;
constexpr double kMaxValue = 1e4;

// Records `step` on the tape that `args` live on.
Var apply_step(const FuzzStep& step, const std::vector<Var>& args, const std::vector<FuzzCustomOp>& custom);

// Computes step.value from the values of its arguments (steps before it).
// False when an input is outside its row's domain, the op refuses the shapes,
// or the result is not finite or too large: such a step is never drawn and
// never kept by the shrinker.
bool evaluate_step(FuzzStep& step, const std::vector<FuzzStep>& steps, const std::vector<FuzzCustomOp>& custom);

// evaluate_step for every step in order (leaves keep their values).
bool evaluate_graph(FuzzGraph& graph);

}  // namespace ag::fuzz_detail
