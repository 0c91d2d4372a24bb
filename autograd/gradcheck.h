// Gradient checking, as a library feature: compare the tape's gradient with
// central finite differences, (f(x + eps) - f(x - eps)) / 2 eps, for every
// element of every input, in double precision.
//
// A non-scalar output is reduced to a scalar with fixed random weights w, so
// the check compares d<w, f>/dx from the tape (backward with dout = w) with its
// finite-difference estimate. Defaults are PyTorch's: eps 1e-6, atol 1e-5, rtol 1e-3.
#pragma once

#include <armadillo>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "autograd/tape.h"

namespace ag {

// The defaults, PyTorch's: the step, and the tolerance of within_tolerance.
constexpr double kDefaultEps = 1e-6, kDefaultAtol = 1e-5, kDefaultRtol = 1e-3;

// f records on the tape it is given and returns its output; the inputs arrive as leaves.
using TapeFunction = std::function<Var(Tape& tape, const std::vector<Var>& inputs)>;

// A scalar function of plain matrices (for example <w, f(inputs)>).
using ScalarFunction = std::function<double(const std::vector<arma::mat>& inputs)>;

// The one central-difference loop of the project (gradcheck, the per-node
// check and the assignment grader all use it; numeric_gradient_rows, below,
// is its batched form for a function of one row): element e of the result is
// (f(x + eps e_e) - f(x - eps e_e)) / (2 eps), with x = inputs[k].
arma::mat numeric_gradient(const ScalarFunction& f, std::vector<arma::mat> inputs, std::size_t k,
                           double eps = kDefaultEps);

// A function of one row that takes many rows at once (a row-wise norm and a
// loss on its output): one value per row of its argument.
using RowsFunction = std::function<arma::vec(const arma::mat& rows)>;

// The same central differences for such a function of the row x, evaluated a
// block at a time: f gets, for `block` elements e at a time, the rows
// x + eps e_e and x - eps e_e (2 rows per element, in that order), so a long
// row costs 2 d / (2 block) calls instead of 2 d. Element e of the result is
// (f(x + eps e_e) - f(x - eps e_e)) / (2 eps), as numeric_gradient's.
arma::rowvec numeric_gradient_rows(const RowsFunction& f, const arma::rowvec& x, double eps = kDefaultEps,
                                   arma::uword block = 64);

// A function of the inputs to any matrix: an output, or a gradient.
using MatrixFunction = std::function<arma::mat(const std::vector<arma::mat>& inputs)>;

// The one directional difference, beside it: (f(x + eps v) - f(x - eps v)) / (2 eps),
// the derivative of f along v (x = inputs, v one direction per input). Forward
// mode's JVP is checked against it, and a Hessian-vector product as the
// directional difference of the gradient.
arma::mat directional_difference(const MatrixFunction& f, const std::vector<arma::mat>& inputs,
                                 const std::vector<arma::mat>& v, double eps);

// The one tolerance test, PyTorch's allclose for one element:
// |value - reference| <= atol + rtol |reference|. NaN is never within.
inline bool within_tolerance(double value, double reference, double atol = kDefaultAtol, double rtol = kDefaultRtol) {
  return std::abs(value - reference) <= atol + rtol * std::abs(reference);
}

struct GradcheckOptions {
  double eps = kDefaultEps;
  double atol = kDefaultAtol;
  double rtol = kDefaultRtol;
  unsigned seed = 0;  // for the output weights and the dot-product directions
};

struct InputReport {
  std::string name;                // "input 0" unless named
  arma::uword rows = 0, cols = 0;
  double max_abs_error = 0;        // max |analytic - numeric|
  double max_rel_error = 0;        // max |analytic - numeric| / max(|analytic|, |numeric|)
  arma::uword worst_row = 0, worst_col = 0;  // the element furthest outside atol + rtol |numeric|
  double worst_analytic = 0, worst_numeric = 0;
  bool passed = true;
  arma::mat analytic, numeric;     // the two full gradients, for display
};

struct GradcheckReport {
  std::vector<InputReport> inputs;
  bool passed = true;
  std::string summary() const;  // one line per input
};

GradcheckReport gradcheck(const TapeFunction& f, const std::vector<arma::mat>& inputs,
                          const GradcheckOptions& options = {},
                          const std::vector<std::string>& names = {});

// The fast check: for random directions v (input space) and u (output space),
// <J v, u> from finite differences along v must equal <v, J^T u> from one backward.
struct DotProductReport {
  double jv_dot_u = 0;    // <J v, u>, numeric
  double v_dot_jtu = 0;   // <v, J^T u>, from the tape
  double abs_error = 0, rel_error = 0;
  bool passed = true;
};

DotProductReport dot_product_test(const TapeFunction& f, const std::vector<arma::mat>& inputs,
                                  const GradcheckOptions& options = {});

}  // namespace ag
