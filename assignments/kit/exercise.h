// An exercise ready to grade: its spec, the forward the grader differentiates,
// and the cases drawn for one grading run (fresh values for every seed).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "assignments/kit/spec.h"
#include "autograd/custom_op.h"

namespace kit {

struct Exercise {
  ExerciseSpec spec;
  std::function<arma::mat(const ag::Inputs& inputs)> forward;
};

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
};

// The spec's cases, then (unless tape = no) the tape case, drawn from `seed`.
std::vector<DrawnCase> draw_cases(const Exercise& ex, unsigned seed);

}  // namespace kit
