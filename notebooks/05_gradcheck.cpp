// %% [markdown]
// # Lesson 05: gradient checking
//
// A handwritten backward is easy to get wrong and hard to eyeball. The check is
// old and simple: nudge an input by a small step h and watch the output move.
//
// - one-sided difference: f'(x) ~ (f(x + h) - f(x)) / h, error about h f''/2;
// - central difference:   f'(x) ~ (f(x + h) - f(x - h)) / 2h, error about h^2 f'''/6.
//
// Smaller h is not always better: the computer rounds f(x) to about
// eps |f| (eps = 1.1e-16 in double, 6e-8 in float), and dividing by h
// magnifies that rounding by 1/h. Truncation error falls as h shrinks, rounding
// error grows: plotted on log axes the total error is a **V**.

// %%
#include <cmath>
#include <iostream>
#include <limits>
#include <vector>

#include "autograd/gradcheck.h"
#include "notebooks/notebook.h"
#include "ops/ops.h"

// f(x) = tanh(x^2 + exp(x)) in any precision, and its exact derivative in double.
template <typename T>
T f(T x) {
  return std::tanh(x * x + std::exp(x));
}
double exact_derivative(double x) {
  const double g = f(x);
  return (1 - g * g) * (2 * x + std::exp(x));
}

// |numeric - exact| for a step h, computed entirely in precision T.
template <typename T>
double one_sided_error(double x, double h) {
  const T xt = T(x), ht = T(h);
  return std::abs(double((f(xt + ht) - f(xt)) / ht) - exact_derivative(x));
}
template <typename T>
double central_error(double x, double h) {
  const T xt = T(x), ht = T(h);
  return std::abs(double((f(xt + ht) - f(xt - ht)) / (T(2) * ht)) - exact_derivative(x));
}

// %% [markdown]
// ## The V curve
//
// At x = 0.3 we try steps h = 10^-1 ... 10^-14 (in float only down to 10^-7,
// below which x + h rounds to x) and draw the error of each formula.

// %%
const double x0 = 0.3;

struct Curve {
  std::vector<double> h, error;
  double best_h = 0, best_error = 1e300;
};

template <typename ErrorFn>
Curve sweep(ErrorFn error, double smallest_h) {
  Curve c;
  for (double e = -1; e >= std::log10(smallest_h) - 1e-9; e -= 0.25) {
    const double h = std::pow(10.0, e);
    const double err = std::max(error(x0, h), 1e-17);  // an exact hit would break the log axis
    c.h.push_back(h);
    c.error.push_back(err);
    if (err < c.best_error) {
      c.best_error = err;
      c.best_h = h;
    }
  }
  return c;
}

NB_CELL {
  const Curve central_d = sweep(central_error<double>, 1e-14);
  const Curve one_sided_d = sweep(one_sided_error<double>, 1e-14);
  const Curve central_f = sweep(central_error<float>, 1e-7);
  const Curve one_sided_f = sweep(one_sided_error<float>, 1e-7);

  nb::Plot plot{"v_curve", "Finite-difference error against the step h, at x = 0.3",
                "step h", "|numeric - exact derivative|", true, true, {}, {"set key bottom right"}};
  plot.add("central, double", central_d.h, central_d.error, "linespoints");
  plot.add("one-sided, double", one_sided_d.h, one_sided_d.error, "linespoints");
  plot.add("central, float", central_f.h, central_f.error, "linespoints");
  plot.add("one-sided, float", one_sided_f.h, one_sided_f.error, "linespoints");
  nb::draw(plot);

  std::cout << "best step and error:\n"
            << "  central,   double: h = " << central_d.best_h << ", error " << central_d.best_error << "\n"
            << "  one-sided, double: h = " << one_sided_d.best_h << ", error " << one_sided_d.best_error << "\n"
            << "  central,   float:  h = " << central_f.best_h << ", error " << central_f.best_error << "\n"
            << "  one-sided, float:  h = " << one_sided_f.best_h << ", error " << one_sided_f.best_error << "\n";

  nb::check(central_d.best_error < 1e-9, "central differences in double reach an error below 1e-9");
  nb::check(central_d.best_error < one_sided_d.best_error / 100,
            "central beats one-sided by at least 100x at their best steps (double)");
  nb::check(central_f.best_error > 1000 * central_d.best_error,
            "float is at least 1000x less accurate than double at the best step");
  nb::check(central_d.best_h > 1e-8 && central_d.best_h < 1e-3,
            "the best central step in double lies between 1e-8 and 1e-3 (theory: eps^(1/3) ~ 5e-6)");
  nb::check(one_sided_d.best_h > 1e-10 && one_sided_d.best_h < 1e-6,
            "the best one-sided step in double lies between 1e-10 and 1e-6 (theory: sqrt(eps) ~ 1e-8)");
}

// %% [markdown]
// Read the plot from right to left. At large h the error falls along a straight
// line: slope 1 for one-sided (error ~ h), slope 2 for central (error ~ h^2).
// Then rounding takes over and the error climbs again as 1/h. The bottom of the
// V is the best achievable:
//
// - double: central reaches about 1e-13 near h ~ 3e-6, one-sided only about 3e-9 near h ~ 2e-8;
// - float: central reaches only about 1e-6 near h ~ 2e-3, one-sided about 1e-4.
//
// That is why gradient checks run in **double** with the **central** formula
// and a step near 1e-6 (PyTorch's gradcheck uses the same defaults as ours:
// eps 1e-6, atol 1e-5, rtol 1e-3). In float, a correct gradient can fail the check.
//
// ## Checking a tape function element by element
//
// `ag::gradcheck` perturbs every element of every input, runs the function
// twice per element and compares with one backward. A non-scalar output is
// turned into a scalar with fixed random weights w: the check compares
// d<w, f(x)>/dx, which tests the whole Jacobian in one backward.

// %%
NB_CELL {
  ag::TapeFunction softplus_mean = [](ag::Tape&, const std::vector<ag::Var>& in) {
    return ag::mean(ag::log(ag::exp(ag::matmul(in[0], in[1])) + 1.0), 1);
  };
  const arma::mat a = {{0.5, -1.0, 0.25}, {1.5, 0.0, -0.5}};
  const arma::mat b = {{1.0, 0.5}, {-0.5, 2.0}, {0.25, -1.0}};
  const ag::GradcheckReport report = ag::gradcheck(softplus_mean, {a, b}, {}, {"a", "b"});
  std::cout << report.summary();
  nb::check(report.passed, "gradcheck passes for mean(log(exp(a b) + 1), dim=1)");
}

// %% [markdown]
// ## The dot-product test
//
// Checking every element costs two forward runs per input element. The
// dot-product test costs one: pick random directions v (like the input) and
// u (like the output). The Jacobian J must satisfy
//
//     <J v, u>  =  <v, J^T u>
//
// The left side is a single directional finite difference,
// (<f(x + h v), u> - <f(x - h v), u>) / 2h; the right side is one backward with
// output gradient u. A wrong backward breaks the equality for almost every v, u.
// Below, a deliberately broken op whose backward is off by a factor of 2.

// %%
NB_CELL {
  // y = x^3, but the backward says 6 x^2 instead of 3 x^2.
  ag::TapeFunction broken_cube = [](ag::Tape& t, const std::vector<ag::Var>& in) {
    return t.record("broken_cube", {in[0]}, arma::pow(in[0].value(), 3),
                    [](ag::Tape& t, const ag::Node& n) {
                      t.accumulate(n.inputs[0], n.grad % (6 * arma::square(t.value(n.inputs[0]))));
                    },
                    ag::Saved{{in[0]}});
  };
  ag::TapeFunction cube = [](ag::Tape&, const std::vector<ag::Var>& in) { return ag::pow_scalar(in[0], 3); };
  const arma::mat x = {{0.5, -1.0, 2.0}, {1.5, -0.5, 0.75}};

  const ag::DotProductReport good = ag::dot_product_test(cube, {x});
  const ag::DotProductReport bad = ag::dot_product_test(broken_cube, {x});
  std::cout << "pow_scalar(x, 3): <Jv,u> = " << good.jv_dot_u << ", <v,J^T u> = " << good.v_dot_jtu
            << " -> " << (good.passed ? "PASS" : "FAIL") << "\n"
            << "broken_cube:      <Jv,u> = " << bad.jv_dot_u << ", <v,J^T u> = " << bad.v_dot_jtu
            << " -> " << (bad.passed ? "PASS" : "FAIL") << "\n";
  nb::check(good.passed, "the dot-product test passes for the correct backward");
  nb::check(!bad.passed, "the dot-product test catches the backward that is off by 2");
  nb::check_close("ratio for the broken op", bad.v_dot_jtu / bad.jv_dot_u, 2.0, 1e-6);
}

// %% [markdown]
// ## What to remember
//
// - Use central differences, in double, with h near 1e-6.
// - The error has a floor: a V of truncation (falls with h) and rounding (grows as 1/h).
// - Element-by-element gradcheck localises a bug; the dot-product test detects one cheaply.
// - The assignment kit's diagnostic gradcheck goes further and names the kind of
//   mistake (a factor of 2, a flipped sign, a transpose, a missing sum).
