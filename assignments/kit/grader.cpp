#include "assignments/kit/grader.h"

#include <algorithm>
#include <cstdio>
#include <iomanip>

#include "assignments/kit/jvp_grader.h"
#include "assignments/kit/norm_hints.h"
#include "assignments/kit/zoo_hints.h"
#include "autograd/gradcheck.h"
#include "ops/ops.h"

namespace kit {

namespace {

// The strict comparison with the exact gradient `expected`, with the sizes a factor hint may
// name: "N, the number of rows of x", "D, the number of columns of x".
ag::DiagnoseOptions strict_options(const ExerciseSpec& s, const DrawnCase& c, const arma::mat& expected) {
  ag::DiagnoseOptions o;
  const double scale = expected.is_empty() ? 1.0 : std::max(arma::abs(expected).max(), 1e-300);
  o.atol = s.tolerance * scale;
  o.rtol = s.tolerance;
  const InputSpec& first = s.inputs.at(0);
  o.sizes.push_back({first.rows + ", the number of rows of " + first.name, double(c.inputs.at(0).n_rows)});
  o.sizes.push_back({first.cols + ", the number of columns of " + first.name, double(c.inputs.at(0).n_cols)});
  return o;
}

// The row of a gradient the child did not send: why, and no points.
bool unanswered(GradeRow& row, const Answer& a, const std::string& why) {
  if (a.answered && a.threw.empty()) return false;
  row.diagnosis.kind = ag::Mistake::Unrecognised;
  row.result = a.answered ? "threw" : "not answered";
  row.note = a.answered ? "your backward threw: " + a.threw : "no answer: " + why;
  return true;
}

// "3.2e-10": the size of a difference, for a hint.
std::string short_number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1e", x);
  return buf;
}

}  // namespace

const char* const kSinglePrecision = "single precision";

bool computed_in_float(const arma::mat& m) {
  bool nonzero = false;
  for (const double v : m) {
    if (double(float(v)) != v) return false;
    nonzero = nonzero || v != 0;
  }
  return nonzero;
}

std::string tolerance_text(double tolerance) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", tolerance);
  return buf;
}

std::string float_hint(const std::string& what, double relative, double tolerance) {
  return "your " + what + " matches the exact gradient to " + short_number(relative) + " of its largest element, the "
         "precision of float, and every number in it is a float: the derivation may well be right, but compute it in "
         "double (arma::mat, not arma::fmat or float); the grader wants " + tolerance_text(tolerance);
}

namespace {

GradeRow gradient_row(const Exercise& ex, const DrawnCase& c, const Answer& a, std::size_t k, const std::string& why) {
  const ExerciseSpec& s = ex.spec;
  GradeRow row;
  row.check = c.label;
  row.gradient = "d" + s.inputs[k].name;
  row.max_points = points_of(s, row.gradient);
  if (unanswered(row, a, why)) return row;
  const arma::mat expected = exact_gradients(ex, c.inputs, c.dy).at(k);
  row.diagnosis = ag::diagnose_gradient(a.grads[k], expected, strict_options(s, c, expected));
  if (!row.diagnosis.correct() && ag::diagnose_gradient(a.grads[k], expected).correct()) {
    row.diagnosis.kind = ag::Mistake::Unrecognised;
    const double relative = row.diagnosis.max_abs_error / std::max(arma::abs(expected).max(), 1e-300);
    if (computed_in_float(a.grads[k])) {
      row.result = kSinglePrecision;
      row.diagnosis.hint = float_hint(row.gradient, relative, s.tolerance);
      return row;
    }
    row.result = "only approximate";
    row.diagnosis.hint = "your " + row.gradient + " matches the exact gradient only to " + short_number(relative) +
                         " of its largest element, the accuracy of finite differences, not of a derived backward: "
                         "the grader wants " + tolerance_text(s.tolerance) + ", so derive it";
    return row;
  }
  row.result = ag::mistake_name(row.diagnosis.kind);
  if (row.diagnosis.kind == ag::Mistake::ConstantFactor) row.result += " " + row.diagnosis.factor_text;
  if (row.diagnosis.kind == ag::Mistake::PartlyCorrect) {
    row.result += " (" + std::to_string(row.diagnosis.correct_elements) + "/" +
                  std::to_string(row.diagnosis.total_elements) + ")";
  }
  if (!row.diagnosis.correct()) {
    NormHint better = norm_hint(s, c, k, a.grads[k], row.diagnosis);
    if (better.result.empty()) better = zoo_hint(s, c, k, a.grads[k]);
    if (!better.result.empty()) {
      row.result = better.result;
      row.diagnosis.hint = better.hint;
    }
  }
  row.points = row.diagnosis.correct() ? row.max_points : 0;
  return row;
}

// loss = sum(dy * f(tanh(x), ...)) on a tape, with the child's gradients as the custom op's
// backward: the tape must accept them and carry them on to the leaves correctly.
GradeRow tape_row(const Exercise& ex, const DrawnCase& c, const Answer& a, const std::string& why) {
  GradeRow row;
  row.check = c.label;
  row.gradient = "all";
  row.max_points = points_of(ex.spec, "tape");
  if (unanswered(row, a, why)) return row;
  const std::vector<arma::mat> grads = a.grads;
  const ag::Function op{ex.spec.name + " (yours)", ex.forward,
                        [grads](const ag::Inputs&, const arma::mat&, const arma::mat&) { return grads; }};
  ag::Tape tape;
  std::vector<ag::Var> leaves, args;
  for (std::size_t k = 0; k < c.leaves.size(); ++k) leaves.push_back(tape.leaf(c.leaves[k], ex.spec.inputs[k].name));
  args = leaves;
  args[0] = ag::tanh(leaves[0]);
  try {
    tape.backward(ag::sum(ag::mul(tape.constant(c.dy), ag::apply(op, args))));
  } catch (const std::exception& e) {
    row.diagnosis.kind = ag::Mistake::Unrecognised;
    row.result = "refused by the tape";
    row.note = e.what();
    return row;
  }
  const std::vector<arma::mat> exact = exact_gradients(ex, c.leaves, c.dy, true);
  for (std::size_t k = 0; k < leaves.size(); ++k) {
    const ag::Diagnosis d = ag::diagnose_gradient(leaves[k].grad(), exact[k], strict_options(ex.spec, c, exact[k]));
    if (!d.correct()) {  // named by what the custom op itself returned, where the exercise's hints apply
      const GradeRow at_op = gradient_row(ex, c, a, k, why);
      row.diagnosis = at_op.diagnosis.correct() ? d : at_op.diagnosis;
      row.result = at_op.diagnosis.correct() ? ag::mistake_name(d.kind) : at_op.result;
      row.note = "d" + ex.spec.inputs[k].name + " through the tape is wrong: " + row.diagnosis.hint;
      return row;
    }
  }
  row.result = "correct";
  row.points = row.max_points;
  return row;
}

}  // namespace

GradeReport score(const Exercise& ex, unsigned seed, const std::vector<DrawnCase>& cases,
                  const ParsedAnswers& answers, const std::string& failure) {
  GradeReport report;
  report.exercise = ex.spec.name;
  report.title = ex.spec.title;
  report.seed = seed;
  if (ex.spec.kind == "jvp") report.column = "tangent";
  report.failure = answers.error;
  if (!failure.empty()) report.failure += (report.failure.empty() ? "" : "; ") + failure;
  const std::string why = report.failure.empty() ? "your program stopped early" : report.failure;
  int hidden = 0;  // the hidden cases so far, numbered in the order they are drawn
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Answer& a = i < answers.answers.size() ? answers.answers[i] : Answer{};
    const std::size_t first = report.rows.size();
    if (ex.spec.kind == "jvp") {
      const std::vector<GradeRow> rows = jvp_rows(ex, cases[i], a, why);
      report.rows.insert(report.rows.end(), rows.begin(), rows.end());
    } else if (cases[i].on_tape) {
      report.rows.push_back(tape_row(ex, cases[i], a, why));
    } else {
      for (std::size_t k = 0; k < cases[i].inputs.size(); ++k) report.rows.push_back(gradient_row(ex, cases[i], a, k, why));
    }
    if (is_hidden(ex.spec, cases[i].on_tape ? ex.spec.cases.size() : i)) {
      ++hidden;
      for (std::size_t r = first; r < report.rows.size(); ++r) report.rows[r].hidden = hidden;
    }
  }
  return report;
}

GradeReport grade_in_process(const Exercise& ex, const Answerer& answer, unsigned seed) {
  const std::vector<DrawnCase> cases = draw_cases(ex, seed);
  ParsedAnswers answers;
  answers.complete = true;
  for (const DrawnCase& c : cases) {
    Answer a;
    a.answered = true;
    try {
      a.grads = answer(c.sent);
      if (a.grads.size() != c.inputs.size()) a.threw = "returned the wrong number of gradients";
    } catch (const std::exception& e) {
      a.threw = e.what();
    }
    answers.answers.push_back(a);
  }
  return score(ex, seed, cases, answers, "");
}

int GradeReport::score() const {
  int s = 0;
  for (const GradeRow& r : rows) s += r.points;
  return s;
}

int GradeReport::max_score() const {
  int s = 0;
  for (const GradeRow& r : rows) s += r.max_points;
  return s;
}

int GradeReport::percent() const { return max_score() ? 100 * score() / max_score() : 0; }

bool GradeReport::found(ag::Mistake kind) const {
  for (const GradeRow& r : rows) {
    if (r.diagnosis.kind == kind) return true;
  }
  return false;
}

std::vector<std::string> GradeReport::hints() const {
  std::vector<std::string> out;
  for (const GradeRow& r : rows) {
    const std::string hint = r.note.empty() ? r.diagnosis.hint : r.note;
    if (!r.diagnosis.correct() && !hint.empty() && std::find(out.begin(), out.end(), hint) == out.end()) {
      out.push_back(hint);
    }
  }
  return out;
}

GradeReport GradeReport::student_view() const {
  GradeReport view = *this;
  view.rows.clear();
  for (const GradeRow& r : rows) {
    if (r.hidden == 0) {
      view.rows.push_back(r);
      continue;
    }
    if (view.rows.empty() || view.rows.back().hidden != r.hidden) {
      GradeRow folded;
      folded.check = "hidden case " + std::to_string(r.hidden);
      folded.hidden = r.hidden;
      folded.max_points = 0;
      folded.result = "pass";
      view.rows.push_back(folded);
    }
    GradeRow& folded = view.rows.back();
    folded.points += r.points;
    folded.max_points += r.max_points;
    if (!r.diagnosis.correct() || !r.note.empty()) {
      folded.result = "fail";
      folded.diagnosis.kind = ag::Mistake::Unrecognised;  // failed, with no hint to give
    }
  }
  return view;
}

void GradeReport::print(std::ostream& os) const {
  const GradeReport view = student_view();
  os << "Grading: " << title << "   (statement: assignments/" << exercise << "/statement.md)\n\n";
  os << std::left << "  " << std::setw(30) << "check" << std::setw(10) << column << std::setw(26) << "result"
     << "points\n";
  std::vector<std::string> printed;
  for (const GradeRow& r : view.rows) {
    os << "  " << std::setw(30) << r.check << std::setw(10) << r.gradient;
    if (r.hidden > 0) {  // pass or fail, and nothing more: not its points, not a hint
      os << r.result << "\n";
      continue;
    }
    os << std::setw(26) << r.result;
    if (r.max_points == 0) os << "given (no points)\n";
    else os << r.points << "/" << r.max_points << "\n";
    const std::string hint = r.note.empty() ? r.diagnosis.hint : r.note;
    if (!r.diagnosis.correct() && std::find(printed.begin(), printed.end(), hint) == printed.end()) {
      os << "      hint: " << hint << "\n";  // each hint once, under the first row that needs it
      printed.push_back(hint);
    }
  }
  if (!failure.empty()) os << "\nyour program: " << failure << "; the checks it did not answer score 0\n";
  os << "\ninputs drawn with seed " << seed << " (--seed " << seed << " draws the same ones)\n";
  os << "score: " << score() << "/" << max_score() << " (" << percent() << "%)\n";
}

}  // namespace kit
