// Inside the fuzzer (check/fuzz.h): the ops a graph step can name, and the
// domain rule each one keeps so finite differences are meaningful.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "check/fuzz.h"

namespace ag::fuzz_detail {

// What an op needs of its inputs (checked on the values a step had when drawn).
enum class Domain {
  Any,
  Broadcast,  // two shapes that broadcast
  Divide,     // broadcast, and |divisor| >= 0.3
  Matmul,     // a's columns = b's rows
  Positive,   // min >= 0.25 (log, sqrt, pow_scalar)
  ExpInput,   // max <= 4.6, so exp stays below 100
  Kink,       // relu: |x| >= 0.01, finite differences never straddle 0
  MaxGap,     // max: the two largest along dim differ by >= 0.01
  TwoAlong,   // unbiased variance: at least 2 values along dim
};

using ApplyFn = std::function<Var(const std::vector<Var>& args, double constant)>;

struct OpDef {
  std::string name;
  int arity;
  Domain domain;
  int dim;  // 0 or 1 for reductions along a dim, -1 otherwise
  ApplyFn apply;
};

const std::vector<OpDef>& op_defs();
const OpDef* find_op(const std::string& name);  // nullptr for "leaf" and custom ops

// Largest magnitude a drawn op may produce (the final sums may reach kMaxValue):
// keeps the rounding error of finite differences far below gradcheck's atol.
constexpr double kMaxMagnitude = 100.0;
constexpr double kMaxValue = 1e4;

// Records `step` on the tape that `args` live on.
Var apply_step(const FuzzStep& step, const std::vector<Var>& args, const std::vector<FuzzCustomOp>& custom);

// Computes step.value from the values of its arguments (steps before it).
// False when an input is outside the op's domain or the result is not finite
// or too large: such a step is never drawn and never kept by the shrinker.
bool evaluate_step(FuzzStep& step, const std::vector<FuzzStep>& steps, const std::vector<FuzzCustomOp>& custom);

// evaluate_step for every step in order (leaves keep their values).
bool evaluate_graph(FuzzGraph& graph);

}  // namespace ag::fuzz_detail
