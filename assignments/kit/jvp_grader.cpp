#include "assignments/kit/jvp_grader.h"

#include <algorithm>
#include <cstdio>

#include "assignments/kit/jvp_hints.h"

namespace kit {

namespace {

// The transpose identity holds to rounding for a derived JVP (a gap below
// 1e-15); central differences of the forward along v, at their best step, leave
// a gap of 9e-12 or more (test_assignments_jvp.cpp asserts both and prints the
// figures), so a "JVP" that only differentiates numerically fails the spec's
// tolerance (kDefaultTolerance, 1e-13, unless it says).
// Central differences with h = 1e-5 err by h^2 f''' / 6 plus rounding / h, below
// 1e-8 of the largest element on these inputs (asserted there too): 1e-6 leaves
// room for a row of small variance (a large rstd) and still catches every wrong
// term but the smallest, eps misplaced, which only the transpose check sees.
constexpr double kDifferenceTolerance = 1e-6;

std::string short_number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1e", x);
  return buf;
}

GradeRow row_for(const ExerciseSpec& s, const DrawnCase& c, std::size_t k, const std::string& check) {
  GradeRow row;
  row.check = c.label + ", " + check;
  row.gradient = "d" + s.inputs[k].name;
  row.max_points = points_of(s, row.gradient);
  return row;
}

// The tangent of every input at once: element i of J_k v_k is <J_k^T e_i, v_k>, one reference VJP per element of y.
std::vector<arma::mat> exact_jvps(const Exercise& ex, const DrawnCase& c) {
  std::vector<arma::mat> jv(c.inputs.size(), arma::mat(arma::size(c.y)));
  arma::mat e(arma::size(c.y), arma::fill::zeros);
  for (arma::uword i = 0; i < e.n_elem; ++i) {
    e(i) = 1;
    const std::vector<arma::mat> row_of_j = exact_gradients(ex, c.inputs, e);
    for (std::size_t k = 0; k < jv.size(); ++k) jv[k](i) = arma::accu(row_of_j[k] % c.tangents[k]);
    e(i) = 0;
  }
  return jv;
}

struct Verdict {
  ag::Diagnosis diagnosis;
  std::string result;
};

// What is wrong with a tangent that failed a check: the exercise's name for the mistake, else
// "only approximate" when it is merely close, else the generic diagnosis against the exact J v.
Verdict verdict_of(const Exercise& ex, const DrawnCase& c, std::size_t k, const arma::mat& yours,
                   const arma::mat& expected, double gap) {
  Verdict v;
  ag::DiagnoseOptions o;
  const InputSpec& first = ex.spec.inputs.at(0);
  o.sizes.push_back({first.rows + ", the number of rows of " + first.name, double(c.inputs.at(0).n_rows)});
  o.sizes.push_back({first.cols + ", the number of columns of " + first.name, double(c.inputs.at(0).n_cols)});
  v.diagnosis = ag::diagnose_gradient(yours, expected, o);
  const NormHint named = jvp_hint(ex.spec, c, k, yours, expected);
  if (!named.result.empty()) {
    if (v.diagnosis.correct()) v.diagnosis.kind = ag::Mistake::Unrecognised;
    v.result = named.result;
    v.diagnosis.hint = named.hint;
  } else if (v.diagnosis.correct() && computed_in_float(yours)) {
    v.diagnosis.kind = ag::Mistake::Unrecognised;
    v.result = kSinglePrecision;
    v.diagnosis.hint = float_hint("d" + ex.spec.inputs[k].name + " term of your tangent", gap, ex.spec.tolerance);
  } else if (v.diagnosis.correct()) {
    v.diagnosis.kind = ag::Mistake::Unrecognised;
    v.result = "only approximate";
    v.diagnosis.hint = "the d" + ex.spec.inputs[k].name + " term of your tangent meets the transpose identity only to " +
                       short_number(gap) + ", the accuracy of finite differences, not of a derived JVP: "
                       "the grader wants " + tolerance_text(ex.spec.tolerance) + ", so derive it";
  } else {
    v.result = ag::mistake_name(v.diagnosis.kind);
    if (v.diagnosis.kind == ag::Mistake::ConstantFactor) v.result += " " + v.diagnosis.factor_text;
  }
  return v;
}

void fail(GradeRow& row, const Verdict& v) {
  row.diagnosis = v.diagnosis;
  row.result = v.result;
  row.points = 0;
}

void pass(GradeRow& row) {
  row.result = "correct";
  row.points = row.max_points;
}

// A tangent the child did not send, or whose function threw: no points on either row.
void unanswered(GradeRow& row, const Answer& a, const std::string& why) {
  row.diagnosis.kind = ag::Mistake::Unrecognised;
  row.result = a.answered ? "threw" : "not answered";
  row.note = a.answered ? "your JVP threw: " + a.threw : "no answer: " + why;
}

}  // namespace

double transpose_gap(const Exercise& ex, const DrawnCase& c, std::size_t k, const arma::mat& yours,
                     const arma::mat& expected) {
  if (arma::size(yours) != arma::size(expected) || !yours.is_finite()) return arma::datum::inf;
  double worst = 0;
  for (const arma::mat& u : c.cotangents) {
    const arma::mat jt_u = exact_gradients(ex, c.inputs, u).at(k);
    const double size = arma::norm(u, "fro") * arma::norm(expected, "fro") +
                        arma::norm(jt_u, "fro") * arma::norm(c.tangents[k], "fro");
    const double gap = std::abs(arma::accu(u % yours) - arma::accu(jt_u % c.tangents[k]));
    worst = std::max(worst, gap / std::max(size, 1e-300));
  }
  return worst;
}

arma::mat exact_jvp(const Exercise& ex, const DrawnCase& c, std::size_t k) { return exact_jvps(ex, c).at(k); }

arma::mat difference_jvp(const Exercise& ex, const DrawnCase& c, std::size_t k, double h) {
  ag::Inputs plus = c.inputs, minus = c.inputs;
  plus[k] += h * c.tangents[k];
  minus[k] -= h * c.tangents[k];
  return (ex.forward(plus) - ex.forward(minus)) / (2 * h);
}

std::vector<GradeRow> jvp_rows(const Exercise& ex, const DrawnCase& c, const Answer& a, const std::string& why) {
  std::vector<GradeRow> rows;
  const std::vector<arma::mat> expected = exact_jvps(ex, c);
  for (std::size_t k = 0; k < c.inputs.size(); ++k) {
    GradeRow transpose = row_for(ex.spec, c, k, "transpose"), differences = row_for(ex.spec, c, k, "differences");
    if (!a.answered || !a.threw.empty()) {
      unanswered(transpose, a, why);
      unanswered(differences, a, why);
    } else {
      const arma::mat& yours = a.grads[k];
      const double gap = transpose_gap(ex, c, k, yours, expected[k]);
      const arma::mat fd = difference_jvp(ex, c, k);
      const bool fd_ok = arma::size(yours) == arma::size(fd) && yours.is_finite() &&
                         arma::abs(yours - fd).max() <= kDifferenceTolerance * std::max(arma::abs(fd).max(), 1e-300);
      const double tolerance = ex.spec.tolerance;
      const Verdict v = gap <= tolerance && fd_ok ? Verdict{} : verdict_of(ex, c, k, yours, expected[k], gap);
      if (gap <= tolerance) pass(transpose);
      else fail(transpose, v);
      if (fd_ok) pass(differences);
      else if (gap > tolerance) fail(differences, v);
      else {  // exact by the reference, yet far from the differences: name it plainly
        differences.diagnosis.kind = ag::Mistake::Unrecognised;
        differences.result = "differs from differences";
        differences.diagnosis.hint = "your tangent differs from central differences of the forward by " +
                                     short_number(arma::abs(yours - fd).max()) + " although it meets the transpose identity";
      }
    }
    rows.push_back(transpose);
    rows.push_back(differences);
  }
  return rows;
}

}  // namespace kit
