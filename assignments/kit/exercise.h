// An exercise ready to grade: its spec, its forward, the same forward on a
// tape (whose own backward is the exact reference the grader compares with),
// and the cases drawn for one grading run (fresh values for every seed).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "assignments/kit/spec.h"
#include "autograd/custom_op.h"
#include "autograd/tape.h"

namespace kit {

struct Exercise {
  ExerciseSpec spec;
  std::function<arma::mat(const ag::Inputs& inputs)> forward;
  std::function<ag::Var(const std::vector<ag::Var>& inputs)> tape_forward;  // the library's ops, same math
};

// d/d(inputs) of sum(dy * forward(inputs)), by the tape's own backward: exact
// to rounding, unlike finite differences (which err by 1e-10 or so), so that
// a backward that only differentiates the forward numerically does not pass.
// `through_tanh`: the forward takes tanh(inputs[0]) (the tape case).
std::vector<arma::mat> exact_gradients(const Exercise& ex, const ag::Inputs& inputs, const arma::mat& dy,
                                       bool through_tanh = false);

// Reads ASSIGNMENTS/NAME/exercise.spec and finds its forward: one of
// forwards.h by name, else the op-table row of that name (with the spec's eps).
Exercise load_exercise(const std::string& assignments, const std::string& name);

struct DrawnCase {
  std::string label;
  ag::Inputs inputs;  // what the forward took (on the tape case: tanh of input 0)
  ag::Inputs leaves;  // the tape case's leaves, before the tanh
  arma::mat y, dy;
  std::vector<arma::mat> sent;  // what the child gets, in the order of the spec's "sends"
  bool on_tape = false;
  // kind = jvp: one random tangent per input, sent after "sends" as one set per input (that
  // input's tangent, the others zero); and the random u of the transpose identity (y's shape).
  std::vector<arma::mat> tangents, cotangents;
};

// The spec's cases, then (unless tape = no) the tape case, drawn from `seed`.
std::vector<DrawnCase> draw_cases(const Exercise& ex, unsigned seed);

}  // namespace kit
