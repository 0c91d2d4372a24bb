// Backward exercises: the student writes a gradient in the explorer's
// language; it is checked against the tape's own backward on freshly drawn
// inputs of several shapes, to 1e-13 of the exact gradient's largest element
// (the grader's tolerance, assignments/kit/grader.h: closer than finite
// differences come), and a wrong one gets the grader's diagnosis
// (ag::diagnose_gradient, then kit::norm_hint's named mistakes).
//
// The language has no grad(): an answer can only compute, never call the
// tape's backward. The given names are constants; the answer binds `dx`.
#pragma once

#include <armadillo>

#include <map>
#include <string>
#include <vector>

namespace explorer {

struct ExerciseRow {
  std::string check;   // "random 3x5"
  int points = 0;
  std::string result;  // "correct", "missing mean term", "error"
  std::string hint;    // a sentence when it lost the point
  double max_error = 0;
};

struct ExerciseReport {
  std::string name, title, statement, answer_name;
  std::vector<std::string> given;  // the names the answer may use
  std::vector<ExerciseRow> rows;
  int score() const;
  int max_score() const { return int(rows.size()); }
  std::string json() const;
};

// The exercises' names, sorted ("layernorm_dx", ...).
std::vector<std::string> exercise_names();

// `answer` checked on cases drawn from `seed`; an empty answer: the statement
// only, no rows. A syntax error (or a name not defined) throws ProgramError;
// an answer that fails on one case (a shape mismatch) loses that row only.
ExerciseReport check_exercise(const std::string& name, const std::string& answer, unsigned seed = 2026);

// One case's given values and its exact gradient (the tape's backward): what
// the tests build a planted answer from (a central difference).
struct ExerciseCase {
  std::string label;
  std::map<std::string, arma::mat> given;
  arma::mat exact;
};
std::vector<ExerciseCase> exercise_cases(const std::string& name, unsigned seed);
// The row a gradient `yours` earns on case `c`.
ExerciseRow check_gradient(const std::string& name, const ExerciseCase& c, const arma::mat& yours);

}  // namespace explorer
