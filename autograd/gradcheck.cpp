#include "autograd/gradcheck.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include "autograd/rng.h"

namespace ag {

namespace {

// <w, f(inputs)> on a throwaway tape that records no backward.
double weighted_output(const TapeFunction& f, const std::vector<arma::mat>& inputs,
                       const arma::mat& w) {
  Tape tape;
  NoGrad no_grad(tape);
  std::vector<Var> vars;
  for (const arma::mat& m : inputs) vars.push_back(tape.constant(m));
  const arma::mat& y = f(tape, vars).value();
  if (y.n_rows != w.n_rows || y.n_cols != w.n_cols) {
    throw Error("gradcheck: the function's output changed shape from " + shape_str(w) + " to " +
                shape_str(y) + " when an input moved by eps");
  }
  return arma::accu(y % w);
}

}  // namespace

arma::mat numeric_gradient(const ScalarFunction& f, std::vector<arma::mat> inputs, std::size_t k, double eps) {
  arma::mat g(arma::size(inputs.at(k)));
  for (arma::uword e = 0; e < g.n_elem; ++e) {
    const double x0 = inputs[k](e);
    inputs[k](e) = x0 + eps;
    const double plus = f(inputs);
    inputs[k](e) = x0 - eps;
    const double minus = f(inputs);
    inputs[k](e) = x0;
    g(e) = (plus - minus) / (2 * eps);
  }
  return g;
}

arma::rowvec numeric_gradient_rows(const RowsFunction& f, const arma::rowvec& x, double eps, arma::uword block) {
  if (block == 0) throw Error("numeric_gradient_rows: a block of 0 elements");
  arma::rowvec g(x.n_elem);
  for (arma::uword first = 0; first < x.n_elem; first += block) {
    const arma::uword n = std::min(block, x.n_elem - first);
    arma::mat rows = arma::repmat(x, 2 * n, 1);
    for (arma::uword e = 0; e < n; ++e) {
      rows(2 * e, first + e) = x(first + e) + eps;
      rows(2 * e + 1, first + e) = x(first + e) - eps;
    }
    const arma::vec values = f(rows);
    if (values.n_elem != rows.n_rows) {
      throw Error("numeric_gradient_rows: f gave " + std::to_string(values.n_elem) + " values for " +
                  std::to_string(rows.n_rows) + " rows");
    }
    for (arma::uword e = 0; e < n; ++e) g(first + e) = (values(2 * e) - values(2 * e + 1)) / (2 * eps);
  }
  return g;
}

arma::mat directional_difference(const MatrixFunction& f, const std::vector<arma::mat>& inputs,
                                 const std::vector<arma::mat>& v, double eps) {
  if (v.size() != inputs.size()) {
    throw Error("directional_difference: " + std::to_string(v.size()) + " directions for " +
                std::to_string(inputs.size()) + " inputs");
  }
  std::vector<arma::mat> plus = inputs, minus = inputs;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    plus[k] += eps * v[k];
    minus[k] -= eps * v[k];
  }
  return (f(plus) - f(minus)) / (2 * eps);
}

namespace {

// Compares r.analytic with r.numeric element by element: the largest errors, the
// worst element (by how far it is past the tolerance) and whether all pass.
void compare_elements(InputReport& r, const GradcheckOptions& options) {
  double worst_excess = -1;
  for (arma::uword e = 0; e < r.numeric.n_elem; ++e) {
    const double numeric = r.numeric(e);
    const double analytic = r.analytic(e);
    const double abs_err = std::abs(analytic - numeric);
    const double scale = std::max(std::abs(analytic), std::abs(numeric));
    r.max_abs_error = std::max(r.max_abs_error, abs_err);
    r.max_rel_error = std::max(r.max_rel_error, scale > 0 ? abs_err / scale : 0.0);
    const double excess = abs_err - (options.atol + options.rtol * std::abs(numeric));  // > 0: outside
    if (!within_tolerance(analytic, numeric, options.atol, options.rtol)) r.passed = false;
    if (e == 0 || !(excess <= worst_excess)) {  // NaN counts as the worst
      worst_excess = std::isnan(excess) ? arma::datum::inf : excess;
      r.worst_row = e % r.rows;
      r.worst_col = e / r.rows;
      r.worst_analytic = analytic;
      r.worst_numeric = numeric;
    }
  }
}

}  // namespace

GradcheckReport gradcheck(const TapeFunction& f, const std::vector<arma::mat>& inputs,
                          const GradcheckOptions& options, const std::vector<std::string>& names) {
  Rng rng(options.seed);

  // Analytic: one backward with dout = w.
  Tape tape;
  std::vector<Var> vars;
  for (const arma::mat& m : inputs) vars.push_back(tape.leaf(m));
  Var out = f(tape, vars);
  // A scalar output is checked as it is; a larger one through random weights.
  const arma::mat w = out.value().n_elem == 1 ? arma::mat(1, 1, arma::fill::ones)
                                              : rng.uniform(out.rows(), out.cols(), -1.0, 1.0);
  tape.backward(out, w);

  GradcheckReport report;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    InputReport r;
    r.name = k < names.size() ? names[k] : "input " + std::to_string(k);
    r.rows = inputs[k].n_rows;
    r.cols = inputs[k].n_cols;
    r.analytic = tape.grad(vars[k]);
    r.numeric = numeric_gradient([&](const std::vector<arma::mat>& x) { return weighted_output(f, x, w); },
                                 inputs, k, options.eps);
    compare_elements(r, options);
    report.passed = report.passed && r.passed;
    report.inputs.push_back(std::move(r));
  }
  return report;
}

std::string GradcheckReport::summary() const {
  std::ostringstream os;
  for (const InputReport& r : inputs) {
    os << r.name << " (" << shape_str(r.rows, r.cols) << "): max abs error " << r.max_abs_error
       << ", max rel error " << r.max_rel_error << ", worst at (" << r.worst_row << ", "
       << r.worst_col << ") analytic " << r.worst_analytic << " numeric " << r.worst_numeric << ": "
       << (r.passed ? "PASS" : "FAIL") << "\n";
  }
  return os.str();
}

DotProductReport dot_product_test(const TapeFunction& f, const std::vector<arma::mat>& inputs,
                                  const GradcheckOptions& options) {
  Rng rng(options.seed);
  Tape tape;
  std::vector<Var> vars;
  for (const arma::mat& m : inputs) vars.push_back(tape.leaf(m));
  Var out = f(tape, vars);
  const arma::mat u = rng.uniform(out.rows(), out.cols(), -1.0, 1.0);
  tape.backward(out, u);

  // <v, J^T u> from the tape, and x +- eps v for the numeric side.
  DotProductReport r;
  std::vector<arma::mat> v;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    v.push_back(rng.uniform(inputs[k].n_rows, inputs[k].n_cols, -1.0, 1.0));
    r.v_dot_jtu += arma::accu(v[k] % tape.grad(vars[k]));
  }
  const MatrixFunction weighted = [&](const std::vector<arma::mat>& x) {
    return arma::mat(1, 1, arma::fill::value(weighted_output(f, x, u)));
  };
  r.jv_dot_u = directional_difference(weighted, inputs, v, options.eps)(0);
  r.abs_error = std::abs(r.jv_dot_u - r.v_dot_jtu);
  const double scale = std::max(std::abs(r.jv_dot_u), std::abs(r.v_dot_jtu));
  r.rel_error = scale > 0 ? r.abs_error / scale : 0.0;
  r.passed = within_tolerance(r.v_dot_jtu, r.jv_dot_u, options.atol, options.rtol);
  return r;
}

}  // namespace ag
