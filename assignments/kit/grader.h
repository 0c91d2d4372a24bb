// The grader's verdict, computed in the trusted parent from the cases it drew
// and the gradients the student's program sent back: each gradient against
// the exact one (the tape's own backward, kit::exact_gradients) to the spec's
// tolerance (1e-13 of its largest element unless it says), closer than finite differences come, diagnosed
// (ag::diagnose_gradient, then the exercise's own hints), and the gradients
// used as a custom op on a tape. Nothing the student's program does other
// than answer with numbers reaches the score.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "assignments/kit/exercise.h"
#include "assignments/kit/protocol.h"
#include "check/diagnose.h"

namespace kit {

struct GradeRow {
  std::string check;     // the case: "random 3x5", "on the tape (random 3x5)"
  std::string gradient;  // "dx", or "all" on the tape (a JVP exercise: the tangent's input)
  int points = 0, max_points = 1;  // max_points 0: given by the stub, graded for the hint only
  int hidden = 0;        // K > 0: a check of hidden case K, which the student sees only as "hidden case K: pass/fail"
  ag::Diagnosis diagnosis;
  std::string result;    // the result column: the mistake's name, or the exercise's name for it
  std::string note;      // what went wrong when it is not a gradient mismatch (unanswered, threw)
};

struct GradeReport {
  std::string exercise, title;
  std::string column = "gradient";  // the second column's heading: "tangent" in a JVP exercise
  unsigned seed = 0;
  std::vector<GradeRow> rows;
  std::string failure;  // what happened to the student's program, when it did not answer everything
  int score() const;
  int max_score() const;
  int percent() const;  // rounded down, so 100 means full marks
  bool found(ag::Mistake kind) const;  // some row was diagnosed as this kind
  std::vector<std::string> hints() const;  // each distinct hint of a row that lost points, in order
  // What the student may see: the rows of each hidden case folded into one, "hidden case K", whose
  // result is "pass" or "fail", with the case's points and no label, diagnosis or hint.
  GradeReport student_view() const;
  void print(std::ostream& os) const;  // the student's view: the score table with a hint under each failed row
};

// Every element exactly a float, and one of them not zero: an answer computed in single
// precision (finite differences in double are never all floats). Such an answer may be
// derived right; its precision, not the method, is what falls short of the tolerance.
bool computed_in_float(const arma::mat& m);
// The result "single precision" and its hint, for `what` ("dx", "the dx term of your tangent").
extern const char* const kSinglePrecision;
std::string float_hint(const std::string& what, double relative, double tolerance);
// "1e-13": a tolerance as a hint names it.
std::string tolerance_text(double tolerance);

// The verdict on `answers` to `cases` (drawn by draw_cases with `seed`);
// `failure` says why the child stopped, when it did not answer every case.
GradeReport score(const Exercise& ex, unsigned seed, const std::vector<DrawnCase>& cases,
                  const ParsedAnswers& answers, const std::string& failure);

// Grading trusted code in this process (the tests' planted mistakes): the
// answer to each case from the matrices the child would have been sent.
using Answerer = std::function<std::vector<arma::mat>(const std::vector<arma::mat>& sent)>;
GradeReport grade_in_process(const Exercise& ex, const Answerer& answer, unsigned seed);

}  // namespace kit
