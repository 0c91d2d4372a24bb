// %% [markdown]
// # Lesson 05: gradient checking
//
// A handwritten backward is easy to get wrong and hard to eyeball. The check is
// old and simple: nudge an input by a small step h and watch the output move.
//
// - one-sided difference: $f'(x) \approx (f(x + h) - f(x)) / h$, error about $h f''/2$;
// - central difference:   $f'(x) \approx (f(x + h) - f(x - h)) / 2h$, error about $h^2 f'''/6$.
//
// Smaller h is not always better: the computer rounds f(x) to about
// u |f|, where u is the unit roundoff ($u = 2^{-53} = 1.1 \times 10^{-16}$ in double, $2^{-24} =
// 6e-8 in float), and dividing by h magnifies that rounding by 1/h. Truncation
// error falls as h shrinks, rounding error grows: plotted on log axes the total
// error is a **V**.
//
// Three different things are called "eps" in this project, and they have
// nothing to do with each other:
//
// | name | what it is | value here |
// |---|---|---|
// | machine epsilon | gap between 1 and the next double, 2u | 2.2e-16 (`std::numeric_limits<double>::epsilon()`) |
// | gradcheck's `eps` | the finite-difference step h (PyTorch's name too) | 1e-6 |
// | LayerNorm's `eps` | added to the variance before the square root | 1e-5 |

// %%
#include <cmath>
#include <iostream>
#include <limits>
#include <string>
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

// f'' and f''' for the model below, by finite differences in long double
// (unit roundoff 5e-20): accurate to a few digits, which is all a model needs.
long double second_derivative(long double x) {
  const long double h = 1e-4L;
  return (f(x + h) - 2 * f(x) + f(x - h)) / (h * h);
}
long double third_derivative(long double x) {
  const long double h = 1e-3L;
  return (f(x + 2 * h) - 2 * f(x + h) + 2 * f(x - h) - f(x - 2 * h)) / (2 * h * h * h);
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
// At x = 0.3 we try steps $h = 10^{-1} \ldots 10^{-14}$ (in float only down to $10^{-7}$,
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

// Least-squares slope of log10(error) against log10(h), over h in [lo, hi].
double slope(const Curve& c, double lo, double hi) {
  std::vector<double> lx, ly;
  for (std::size_t k = 0; k < c.h.size(); ++k) {
    if (c.h[k] >= lo * (1 - 1e-9) && c.h[k] <= hi * (1 + 1e-9)) {
      lx.push_back(std::log10(c.h[k]));
      ly.push_back(std::log10(c.error[k]));
    }
  }
  const double n = double(lx.size());
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::size_t k = 0; k < lx.size(); ++k) sx += lx[k], sy += ly[k], sxx += lx[k] * lx[k], sxy += lx[k] * ly[k];
  return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

NB_CELL {
  const Curve central_d = sweep(central_error<double>, 1e-14);
  const Curve one_sided_d = sweep(one_sided_error<double>, 1e-14);
  const Curve central_f = sweep(central_error<float>, 1e-7);
  const Curve one_sided_f = sweep(one_sided_error<float>, 1e-7);

  // The error model: truncation plus a bound on rounding. Rounding x + h moves the
  // argument by up to u |x| (f moves by u |x f'|); evaluating f rounds by about u |f|.
  const double u = std::numeric_limits<double>::epsilon() / 2;
  const double f2 = double(std::abs(second_derivative(x0))), f3 = double(std::abs(third_derivative(x0)));
  const double rounding = u * (std::abs(f(x0)) + std::abs(x0 * exact_derivative(x0)));  // u C
  auto central_model = [&](double h) { return h * h * f3 / 6 + rounding / h; };
  auto one_sided_model = [&](double h) { return h * f2 / 2 + 2 * rounding / h; };
  std::vector<double> model_central, model_one_sided;
  for (double h : central_d.h) {
    model_central.push_back(central_model(h));
    model_one_sided.push_back(one_sided_model(h));
  }
  const double h_star = std::cbrt(3 * rounding / f3);  // where the central model is lowest
  const double floor_central = central_model(h_star);
  const double h_star_one = std::sqrt(4 * rounding / f2);
  const double floor_one_sided = one_sided_model(h_star_one);

  nb::Plot plot{"v_curve", "Finite-difference error against the step h, at x = 0.3",
                "step h", "|numeric - exact derivative|", true, true, {}, {"set key inside top left", "set yrange [1e-13:1e3]"}};
  plot.add("central, double", central_d.h, central_d.error, "linespoints");
  plot.add("one-sided, double", one_sided_d.h, one_sided_d.error, "linespoints");
  plot.add("central, float", central_f.h, central_f.error, "linespoints");
  plot.add("one-sided, float", one_sided_f.h, one_sided_f.error, "linespoints");
  plot.add("model, central: h^2 |f'''|/6 + uC/h", central_d.h, model_central, "lines dt 2 lw 2 lc rgb 'black'");
  plot.add("model, one-sided: h |f''|/2 + 2uC/h", central_d.h, model_one_sided, "lines dt 3 lw 2 lc rgb 'black'");
  nb::draw(plot);

  // How many steps near the model's best h dip far below the model's floor.
  std::size_t near = 0, dips = 0;
  for (std::size_t k = 0; k < central_d.h.size(); ++k) {
    if (central_d.h[k] > h_star / 10 && central_d.h[k] < h_star * 10) {
      ++near;
      if (central_d.error[k] < floor_central / 10) ++dips;
    }
  }
  const double s_central = slope(central_d, 1e-3, 1e-1), s_one = slope(one_sided_d, 1e-4, 1e-1);
  const double s_round = slope(central_d, 1e-14, 1e-9);
  std::cout << "model: |f''| = " << f2 << ", |f'''| = " << f3 << ", rounding constant u C = " << rounding << "\n"
            << "  central:   best h = (3 u C / |f'''|)^(1/3) = " << h_star << ", floor " << floor_central << "\n"
            << "  one-sided: best h = (4 u C / |f''|)^(1/2)  = " << h_star_one << ", floor " << floor_one_sided << "\n"
            << "measured, best step and error:\n"
            << "  central,   double: h = " << central_d.best_h << ", error " << central_d.best_error << "\n"
            << "  one-sided, double: h = " << one_sided_d.best_h << ", error " << one_sided_d.best_error << "\n"
            << "  central,   float:  h = " << central_f.best_h << ", error " << central_f.best_error << "\n"
            << "  one-sided, float:  h = " << one_sided_f.best_h << ", error " << one_sided_f.best_error << "\n"
            << "slopes of log error against log h: central " << s_central << " (h >= 1e-3), one-sided " << s_one
            << " (h >= 1e-4), central in the rounding region " << s_round << " (h <= 1e-9)\n"
            << "steps within 10x of the model's best h: " << near << ", of them below a tenth of its floor: " << dips
            << "\n";

  nb::check(floor_central > 1e-12 && floor_central < 1e-10, "the model's floor for central differences in double is 1e-12 .. 1e-10");
  nb::check(central_d.best_error < floor_central / 10,
            "the best measured central error is a lucky dip, over 10x below the model's floor");
  nb::check(dips * 2 < near, "most steps near the best h do not dip that low");
  nb::check_close("truncation slope of central differences", s_central, 2.0, 0.1);
  nb::check_close("truncation slope of one-sided differences", s_one, 1.0, 0.1);
  nb::check_close("rounding slope of central differences (noisy)", s_round, -1.0, 0.3);
  nb::check(central_d.best_error < one_sided_d.best_error / 100,
            "central beats one-sided by at least 100x at their best steps (double)");
  nb::check(central_f.best_error > 1000 * central_d.best_error,
            "float is at least 1000x less accurate than double at the best step");
  nb::check(central_d.best_h > h_star / 30 && central_d.best_h < h_star * 30,
            "the best central step in double lies within 30x of the model's best h");
}

// %% [markdown]
// Read the plot from right to left. At large h the error falls along a straight
// line: slope 1 for one-sided (error $\sim h$), slope 2 for central (error $\sim h^2$),
// as the fitted slopes above confirm. Then rounding takes over and the error
// climbs again as 1/h, ragged, because rounding errors have random signs. The
// black curves are the model, truncation plus a bound on rounding (C = |f| +
// |x f'|); the bottom of the model's V is the floor you can count on, printed
// above: about 3e-11 near h ~ 5e-6 for central differences in double.
//
// The lowest measured point of the central curve lies far below the model: at
// that one step the rounding errors of f(x + h) and f(x - h) happened to cancel.
// That dip is luck, not accuracy; move x or h a little and it is gone. Plan
// with the floor, 1e-11 to 1e-10, not with the best point. Float reaches only
// about 1e-6 (central) and 1e-4 (one-sided) at its best.
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
// $d \langle w, f(x) \rangle / dx$, that is one vector-Jacobian product $w^T J$, with every
// component of it estimated numerically. That is not the whole Jacobian: an error in J that
// w^T does not see (for example in an output whose weight is 0) would pass.
// With random w such a blind spot has probability zero, but it is one product,
// not J entry by entry. The same holds for the dot-product test below, with
// one random direction on each side.

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
// dot-product test costs one directional difference (two forward runs) and
// one backward, whatever the number of inputs: pick random directions v (like the input) and
// u (like the output). The Jacobian J must satisfy
//
// $$
// \langle J v, u \rangle = \langle v, J^T u \rangle
// $$
//
// The left side is a single directional finite difference,
// $(\langle f(x + h v), u \rangle - \langle f(x - h v), u \rangle) / 2h$; the right side is one backward with
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
// ## Kinks: where the check fails on a correct backward
//
// relu and max are not differentiable everywhere. At a kink the central
// difference averages the slopes on either side, while backward picks one
// subgradient: relu's at 0, max's at a tie. The check then reports a failure
// that is not a bug, and it does so within a step h of the kink too.

// %%
NB_CELL {
  ag::TapeFunction relu_sum = [](ag::Tape&, const std::vector<ag::Var>& in) { return ag::sum(ag::relu(in[0])); };
  ag::TapeFunction max_sum = [](ag::Tape&, const std::vector<ag::Var>& in) { return ag::sum(ag::max(in[0], 1)); };
  const ag::GradcheckReport at_zero = ag::gradcheck(relu_sum, {arma::mat{{-1.0, 0.0, 2.0}}});
  const ag::GradcheckReport near_zero = ag::gradcheck(relu_sum, {arma::mat{{-1.0, 3e-7, 2.0}}});
  const ag::GradcheckReport away = ag::gradcheck(relu_sum, {arma::mat{{-1.0, 0.1, 2.0}}});
  const ag::GradcheckReport tie = ag::gradcheck(max_sum, {arma::mat{{2.0, 2.0, 1.0}}});
  nb::show("relu at [-1, 0, 2]: analytic", at_zero.inputs[0].analytic);
  nb::show("relu at [-1, 0, 2]: numeric", at_zero.inputs[0].numeric);
  nb::show("relu at [-1, 3e-7, 2]: numeric", near_zero.inputs[0].numeric);
  nb::show("max of [2, 2, 1]: analytic", tie.inputs[0].analytic);
  nb::show("max of [2, 2, 1]: numeric", tie.inputs[0].numeric);
  const arma::mat& n0 = at_zero.inputs[0].numeric;
  const arma::mat& t_a = tie.inputs[0].analytic;
  const arma::mat& t_n = tie.inputs[0].numeric;
  nb::check(!at_zero.passed && !near_zero.passed && away.passed,
            "gradcheck fails for relu at 0 and at 3e-7 (inside h = 1e-6), passes at 0.1");
  nb::check_close("at the kink the numeric slope is the average of 0 and 1", n0(0, 1), 0.5 * n0(0, 2), 1e-6);
  nb::check(at_zero.inputs[0].analytic(0, 1) == 0.0, "relu's backward uses the subgradient 0 at x = 0");
  nb::check(!tie.passed, "gradcheck fails for max at a tie");
  nb::check_close("at a tie the numeric gradient splits evenly", t_n(0, 0), t_n(0, 1), 1e-6);
  nb::check(t_a(0, 0) != 0.0 && t_a(0, 1) == 0.0, "max's backward sends everything to the first maximum");
}

// %% [markdown]
// So test ops with kinks at inputs kept away from them (the op table's input
// domains do this: `Domain::Kink` for relu, `Domain::MaxGap` for max), and when a check fails only at special points, look at the
// inputs before suspecting the backward.
//
// ## What to remember
//
// - Use central differences, in double, with h near 1e-6.
// - The error has a floor: a V of truncation (falls with h) and rounding (grows as 1/h);
//   plan with the model's floor (1e-11 to 1e-10 here), not a lucky point.
// - One random projection checks one vector-Jacobian product, not the whole Jacobian.
// - At kinks (relu at 0, max at ties) a correct backward fails the check.
// - Element-by-element gradcheck localises a bug; the dot-product test detects one cheaply.
// - The assignment kit's diagnostic gradcheck goes further and names the kind of
//   mistake (a factor of 2, a flipped sign, a transpose, a missing sum).

// %% [markdown]
// ## Exercises
//
// 1. (medium) Use the error model of this lesson to predict the best central step and
//    the error floor for f = exp at x = 0 in double. Then measure them by
//    adapting `sweep`.
// 2. (medium) Why would a correct gradient fail PyTorch's default tolerances
//    (atol 1e-5, rtol 1e-3) if the check ran in float32? Use the model.
// 3. (hard) Write a TapeFunction whose backward is wrong but that passes `gradcheck`
//    at the point you test it. What does that teach about choosing test
//    points?
// 4. (medium) A ReLU network's pre-activations are roughly N(0, 1). For one unit, what
//    is the probability that a random input lands within h = 1e-6 of the kink?
//    For a gradcheck over 10^4 units?
// 5. (medium) The dot-product test uses one random pair (v, u). If the backward is
//    wrong, why does a random pair catch it with probability 1 in exact
//    arithmetic, and why can it still miss in floating point?
