#include "check/diagnose.h"

#include <cmath>
#include <sstream>

namespace ag {

namespace {

// within_tolerance (autograd/gradcheck.h), element by element.
arma::umat close_mask(const arma::mat& a, const arma::mat& b, const DiagnoseOptions& o) {
  arma::umat ok(arma::size(a));
  for (arma::uword e = 0; e < a.n_elem; ++e) ok(e) = within_tolerance(a(e), b(e), o.atol, o.rtol) ? 1 : 0;
  return ok;
}

bool all_close(const arma::mat& a, const arma::mat& b, const DiagnoseOptions& o) {
  return a.n_rows == b.n_rows && a.n_cols == b.n_cols && arma::all(arma::vectorise(close_mask(a, b, o)));
}

std::string shape_of(const arma::mat& m) { return shape_str(m); }

// "rows 2, 3" / "column 0" when the wrong elements fill whole rows or columns.
std::string where_wrong(const arma::umat& ok) {
  std::vector<arma::uword> rows, cols;
  for (arma::uword r = 0; r < ok.n_rows; ++r) {
    if (!arma::any(ok.row(r))) rows.push_back(r);
  }
  for (arma::uword c = 0; c < ok.n_cols; ++c) {
    if (!arma::any(ok.col(c))) cols.push_back(c);
  }
  auto list = [](const char* one, const char* many, const std::vector<arma::uword>& v) {
    std::string s = v.size() == 1 ? one : many;
    for (std::size_t k = 0; k < v.size(); ++k) s += (k ? ", " : " ") + std::to_string(v[k]);
    return s;
  };
  const arma::uword wrong = ok.n_elem - arma::accu(ok);
  if (!rows.empty() && rows.size() * ok.n_cols == wrong) return "wrong in " + list("row", "rows", rows) + " only";
  if (!cols.empty() && cols.size() * ok.n_rows == wrong) return "wrong in " + list("column", "columns", cols) + " only";
  std::ostringstream os;
  bool first = true;
  for (arma::uword e = 0, shown = 0; e < ok.n_elem && shown < 4; ++e) {
    if (ok(e)) continue;
    os << (first ? "wrong at " : ", ") << "(" << e % ok.n_rows << ", " << e / ok.n_rows << ")";
    first = false;
    ++shown;
  }
  if (wrong > 4) os << " ...";
  return os.str();
}

// The least-squares c in yours ~ c expected, <yours, e> / <e, e>, with both
// scaled to a largest magnitude of 1 first: the sums of products of values near
// 1e308 overflow to inf (and of values near 1e-200 underflow to 0) where the
// ratio itself is an ordinary number. Not finite only when the ratio is.
double fitted_factor(const arma::mat& yours, const arma::mat& expected) {
  const double sy = arma::abs(yours).max(), se = arma::abs(expected).max();
  const arma::mat y = yours / sy, e = expected / se;
  return (sy / se) * (arma::accu(y % e) / arma::accu(e % e));
}

// What a factor might mean: "1/N" when 1/factor is a size the caller named.
std::string factor_meaning(double factor, const DiagnoseOptions& o) {
  for (const auto& [name, n] : o.sizes) {
    // From 3 on: a factor 2 with 2 rows is more likely a term counted twice.
    if (n > 2 && std::abs(factor * n - 1) < 1e-6) return " This is 1/(" + name + "): a mean where a sum belongs?";
    if (n > 2 && std::abs(factor - n) < 1e-6 * n) return " This is " + name + ": a sum where a mean belongs?";
  }
  if (std::abs(std::abs(factor) - 2) < 1e-6) return " A term counted twice, or a 2 from d(x^2) applied twice?";
  if (std::abs(std::abs(factor) - 0.5) < 1e-6) return " A factor 2 missing, as in d(x^2)/dx = 2x?";
  return "";
}

Diagnosis different_shapes(const arma::mat& yours, const arma::mat& expected, const DiagnoseOptions& o) {
  Diagnosis d;
  d.total_elements = expected.n_elem;
  if (yours.n_rows == expected.n_cols && yours.n_cols == expected.n_rows && all_close(yours.t(), expected, o)) {
    d.kind = Mistake::Transposed;
    d.hint = "Yours is " + shape_of(yours) + ", the transpose of the expected " + shape_of(expected) +
             " gradient (and its values match once transposed): check the order of a matrix product or a .t().";
    return d;
  }
  const bool rows_broadcast = expected.n_rows == 1 && yours.n_rows > 1 && expected.n_cols == yours.n_cols;
  const bool cols_broadcast = expected.n_cols == 1 && yours.n_cols > 1 && expected.n_rows == yours.n_rows;
  const bool both = expected.n_elem == 1 && yours.n_elem > 1;
  arma::mat summed;
  if (both) summed = arma::mat(1, 1, arma::fill::value(arma::accu(yours)));
  else if (rows_broadcast) summed = arma::sum(yours, 0);
  else if (cols_broadcast) summed = arma::sum(yours, 1);
  if (!summed.is_empty() && all_close(summed, expected, o)) {
    d.kind = Mistake::MissingBroadcastSum;
    d.broadcast_dim = both ? 2 : (rows_broadcast ? 0 : 1);
    const char* over = both ? "over every element" : (rows_broadcast ? "down the rows (sum over dim 0)"
                                                                      : "across the columns (sum over dim 1)");
    d.hint = "Yours is " + shape_of(yours) + " but the input is " + shape_of(expected) +
             "; summing yours " + over + " gives the right gradient. The input was broadcast in the forward, "
             "so its gradient is the sum over the broadcast dimension.";
    return d;
  }
  d.kind = Mistake::WrongShape;
  d.hint = "Yours is " + shape_of(yours) + " but a gradient has the shape of its input, " + shape_of(expected) + ".";
  return d;
}

}  // namespace

const char* mistake_name(Mistake m) {
  switch (m) {
    case Mistake::None: return "correct";
    case Mistake::ConstantFactor: return "constant factor";
    case Mistake::WrongSign: return "wrong sign";
    case Mistake::Transposed: return "transposed";
    case Mistake::MissingBroadcastSum: return "missing broadcast sum";
    case Mistake::Zero: return "zero";
    case Mistake::PartlyCorrect: return "partly correct";
    case Mistake::WrongShape: return "wrong shape";
    case Mistake::NotFinite: return "not finite";
    case Mistake::Unrecognised: return "wrong";
  }
  return "?";
}

std::string fraction_text(double x) {
  // Past 1e6 no small fraction is meant (and long(p) would overflow near 1e308).
  for (int q = 1; q <= 64 && std::abs(x) < 1e6; ++q) {
    const double p = std::round(x * q);
    if (p != 0 && std::abs(x * q - p) < 1e-6 * std::max(1.0, std::abs(p))) {
      return q == 1 ? std::to_string(long(p)) : std::to_string(long(p)) + "/" + std::to_string(q);
    }
  }
  std::ostringstream os;
  os.precision(4);
  os << x;
  return os.str();
}

namespace {

// yours ~ c expected for the best c (least squares), accepted if it explains every
// element; or a ratio past the largest double. True when `d` now says which.
bool explained_by_factor(const arma::mat& yours, const arma::mat& expected, const DiagnoseOptions& o, Diagnosis& d) {
  const double scale = arma::abs(expected).max();
  if (scale <= o.atol) return false;
  const double c = fitted_factor(yours, expected);
  if (!std::isfinite(c)) {  // yours / expected is past the largest double: no factor to name
    std::ostringstream os;
    os.precision(3);
    os << "Yours is far too large: up to " << arma::abs(yours).max() << " where the expected gradient is at most "
       << scale << ", a ratio past the largest double. A division by a value that should be a multiplication, "
       << "or an exponent applied twice?";
    d.kind = Mistake::Unrecognised;
    d.hint = os.str();
    return true;
  }
  if (!all_close(yours, c * expected, o) || std::abs(c - 1) <= 1e-6) return false;
  d.factor = c;
  d.factor_text = fraction_text(c);
  if (std::abs(c + 1) < 1e-6) {
    d.kind = Mistake::WrongSign;
    d.hint = "Right size, wrong sign: yours = -expected. Check a subtraction, or the sign of a term.";
  } else {
    d.kind = Mistake::ConstantFactor;
    d.hint = "Off by a constant factor: yours = " + d.factor_text + " x expected." + factor_meaning(c, o);
    if (c < 0) d.hint += " (The sign is flipped too.)";
  }
  return true;
}

// What no factor explains: a transpose, some elements right (`ok`), or no pattern.
void explain_pattern(const arma::mat& yours, const arma::mat& expected, const arma::umat& ok, const DiagnoseOptions& o,
                     Diagnosis& d) {
  if (yours.n_rows == yours.n_cols && yours.n_rows > 1 && all_close(yours.t(), expected, o)) {
    d.kind = Mistake::Transposed;
    d.hint = "Yours is the transpose of the expected gradient: check the order of a matrix product or a .t().";
    return;
  }
  if (d.correct_elements > 0) {
    d.kind = Mistake::PartlyCorrect;
    d.hint = "Correct on " + std::to_string(d.correct_elements) + " of " + std::to_string(d.total_elements) +
             " elements, " + where_wrong(ok) + ": a loop bound, or a term that only some elements get?";
    return;
  }
  d.kind = Mistake::Unrecognised;
  std::ostringstream os;
  os << "Wrong everywhere with no simple pattern (largest difference " << d.max_abs_error
     << "). Re-derive it on a 1x3 example by hand and compare term by term.";
  d.hint = os.str();
}

}  // namespace

Diagnosis diagnose_gradient(const arma::mat& yours, const arma::mat& expected, const DiagnoseOptions& o) {
  if (yours.n_rows != expected.n_rows || yours.n_cols != expected.n_cols) {
    return different_shapes(yours, expected, o);
  }
  Diagnosis d;
  d.total_elements = expected.n_elem;
  const arma::umat ok = close_mask(yours, expected, o);
  d.correct_elements = arma::accu(ok);
  d.max_abs_error = expected.n_elem ? arma::abs(yours - expected).max() : 0.0;
  if (expected.n_elem) {
    arma::mat gap = arma::abs(yours - expected);
    gap.replace(arma::datum::nan, arma::datum::inf);
    const arma::uword at = gap.index_max();
    d.elementwise = true;
    d.worst_row = at % expected.n_rows;
    d.worst_col = at / expected.n_rows;
    d.worst_yours = yours(at);
    d.worst_expected = expected(at);
  }
  if (!yours.is_finite()) {
    d.kind = Mistake::NotFinite;
    d.hint = "Yours contains NaN or inf: a division by zero, or a log/sqrt of a negative number?";
    return d;
  }
  if (d.correct_elements == d.total_elements) return d;  // correct
  if (arma::abs(yours).max() <= o.atol) {
    d.kind = Mistake::Zero;
    d.hint = "Yours is all zeros: is the TODO still there, or is the result never written?";
    return d;
  }
  if (!explained_by_factor(yours, expected, o, d)) explain_pattern(yours, expected, ok, o, d);
  return d;
}

std::vector<Diagnosis> diagnose(const TapeFunction& f, const std::vector<arma::mat>& inputs,
                                const GradcheckOptions& gradcheck_options, const DiagnoseOptions& options) {
  std::vector<Diagnosis> result;
  try {
    const GradcheckReport report = gradcheck(f, inputs, gradcheck_options);
    for (const InputReport& r : report.inputs) result.push_back(diagnose_gradient(r.analytic, r.numeric, options));
  } catch (const Error& e) {
    Diagnosis d;
    d.kind = Mistake::WrongShape;
    d.hint = e.what();
    result.assign(inputs.size(), d);
  }
  return result;
}

}  // namespace ag
