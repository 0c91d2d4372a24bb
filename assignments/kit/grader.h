// The grader: runs a student's backward on fixed cases, compares each gradient
// with finite differences of the given forward, and explains each mistake
// (ag::diagnose_gradient); then uses the backward inside a small tape as a
// custom op and runs the per-node check on it.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "autograd/custom_op.h"
#include "check/diagnose.h"

namespace kit {

// One set of input values the backward is graded on.
struct Case {
  std::string name;   // "random 3x5"
  ag::Inputs inputs;  // in the order of Exercise::input_names
};

// An exercise: a given forward, the student's backward, and the cases.
// The backward returns one gradient per input, in input order.
struct Exercise {
  std::string name;                       // "softmax"
  std::string title;                      // "softmax backward"
  std::vector<std::string> input_names;   // {"x", "gamma", "beta"}
  std::function<arma::mat(const ag::Inputs& inputs)> forward;
  std::function<ag::Grads(const ag::Inputs& inputs, const arma::mat& y, const arma::mat& dy)> backward;
  std::vector<Case> cases;
};

struct GradeRow {
  std::string check;     // the case, or "on the tape (per-node check)"
  std::string gradient;  // "dx"
  int points = 0, max_points = 1;
  ag::Diagnosis diagnosis;
  std::string note;      // what went wrong when it is not a gradient mismatch
};

struct GradeReport {
  std::string exercise, title;
  std::vector<GradeRow> rows;
  int score() const;
  int max_score() const;
  int percent() const;  // rounded down, so 100 means full marks
  bool found(ag::Mistake kind) const;  // some row was diagnosed as this kind
  void print(std::ostream& os) const;  // the score table with a hint under each failed row
};

GradeReport grade(const Exercise& exercise);

// Prints the report; returns the exit status (0 full marks, 1 otherwise).
int print_report(const GradeReport& report, std::ostream& os);

// Reproducible random matrices for the cases: uniform in [lo, hi].
arma::mat random_matrix(arma::uword rows, arma::uword cols, unsigned seed, double lo = -2, double hi = 2);

}  // namespace kit
