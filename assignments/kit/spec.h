// An exercise as the grader reads it: assignments/<name>/exercise.spec, a few
// "key = value" lines (assignments/README.md, "Adding an exercise"). The spec
// says which inputs the forward takes and how they are drawn, what the
// student's program is sent, which gradients carry no points (the stub gives
// them), which hints apply, the shapes of the cases, and how it is scored: the
// tolerance, the points of each check and the cases hidden from the student.
// Nothing about an exercise is listed anywhere else: the build and `autograd
// grade` find the folders that hold an exercise.spec.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace kit {

// How close to the exact gradient an answer must be, relative to the gradient's largest element,
// when the spec sets no `tolerance`. Every reference solution is well within it; central
// differences of the forward, at their best step, come no closer than 4e-11 (softmax) to 1.4e-9
// (log_softmax_ce) wherever the forward is not affine in the input (test_assignments_exact.cpp
// prints the figures; docs/grading.md).
constexpr double kDefaultTolerance = 1e-13;

// "input = gamma 1 D 0.5 1.5": a 1 x D input drawn uniformly in [0.5, 1.5].
struct InputSpec {
  std::string name, rows, cols;  // a number or a dimension named by the cases ("N", "D")
  double lo = -2, hi = 2;
};

// "case = large logits | N=3 D=4 | x+50": a label, the dimensions, optional offsets.
struct CaseSpec {
  std::string label;
  std::map<std::string, unsigned> dims;
  std::map<std::string, double> offsets;  // added to an input after it is drawn
};

struct ExerciseSpec {
  std::string name;    // the folder's name: "layernorm"
  std::string folder;  // where the spec was read from
  std::string title;   // "LayerNorm backward"
  std::string kind = "backward";  // "backward", or "jvp": the student writes the tangent (kit/jvp_grader.h)
  std::string forward;  // a forward the kit knows (forwards.h) or an op-table row ("batchnorm_composed")
  std::string forward_at;  // "FOLDER/exercise.spec:3", where the forward is named: its errors say so
  std::string header;  // the public header the stub includes, in the folder (default NAME.h)
  std::string hints;   // one of hint_names(), or ""
  double eps = 0;
  std::vector<InputSpec> inputs;
  std::vector<std::string> sends;  // what the child reads, in order: input names, "y", "dy", "eps"
  std::vector<std::string> given;  // gradients the stub already returns: graded, worth no points
  std::vector<CaseSpec> cases;
  bool tape = true;  // also grade the backward used as a custom op on a tape
  // "banned = none" lifts the policy that refuses complex numbers and wider floats in a backward
  // or JVP exercise (docs/grading.md, "Banned constructs": complex-step is exact, no tolerance catches it).
  bool banned = true;
  // "tolerance = 1e-12": the exact comparison's atol and rtol, relative to the gradient's largest
  // element (a JVP exercise: the transpose identity's); kit/grader.cpp.
  double tolerance = kDefaultTolerance;
  // "points = dx 2 tape 3": what each check of a gradient (every case's) is worth; "tape" is the
  // tape check. A gradient not named is worth 1, a given one 0 (points_of).
  std::map<std::string, int> points;
  // "hidden = 2": the last 2 cases are hidden cases. They count in the score, but the student's
  // report shows each only as "hidden case K: pass/fail" (GradeReport::student_view).
  std::size_t hidden = 0;
};

// The names `hints =` takes: kit/norm_hints.h's layernorm and rmsnorm (and kit/jvp_hints.h's
// layernorm), kit/zoo_hints.h's softmax, cross_entropy, linear, batchnorm and engine.
const std::vector<std::string>& hint_names();

// What a check of `gradient` ("dx", or "tape" for the tape check) is worth: 0 when the stub gives
// it (`given`), its `points` when the spec names it, else 1.
int points_of(const ExerciseSpec& s, const std::string& gradient);

// Whether the spec's case k is hidden; k = cases.size() is the tape case, drawn with the first
// case's sizes, and hidden only when every case is.
bool is_hidden(const ExerciseSpec& s, std::size_t k);

// Reads FOLDER/exercise.spec; an ag::DataError (a setup error: the command line's status 2)
// names the file, the line and what was expected.
ExerciseSpec read_spec(const std::string& folder);

// The exercises under `assignments` (the folders that hold an exercise.spec), sorted.
std::vector<std::string> exercise_names(const std::string& assignments);

// The size a "rows"/"cols" field stands for in a case; an ag::DataError when the case lacks it.
unsigned dimension(const ExerciseSpec& spec, const CaseSpec& c, const std::string& field);

}  // namespace kit
