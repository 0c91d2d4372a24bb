// %% [markdown]
// # Lesson 14: precision, float32 against float64
//
// The engine computes in double, but GPUs train in float32 (and lower). Where
// does float lose digits in LayerNorm? This lesson writes
// LayerNorm's statistics and its backward (lesson 04's formula) as templates,
// runs them in float and in double on the same rows, and measures where float
// loses: in the variance of a row whose mean is large compared with its
// spread. Three ways to compute that variance:
//
// | method | formula | passes over the row |
// |---|---|---|
// | one-pass | $\mathrm{mean}(x^2) - \mathrm{mean}(x)^2$ | 1 |
// | two-pass | $\mathrm{mean}((x - \mathrm{mean}(x))^2)$ | 2 |
// | Welford | a running mean and sum of squared deviations, updated per value | 1 |
//
// For a row with mean c and standard deviation s, $\mathrm{mean}(x^2)$ is about
// $c^2 + s^2$: the one-pass formula subtracts two numbers of size $c^2$ to get
// $s^2$, and float's unit roundoff $u = 6 \times 10^{-8}$ of $c^2$ becomes an error of
// $u c^2 / s^2$ relative to the variance. That is catastrophic cancellation.

// %%
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "autograd/rng.h"
#include "notebooks/notebook.h"
#include "ops/layernorm.h"
#include "ops/ops.h"

using ag::Tape;
using ag::Var;

enum class Variance { OnePass, TwoPass, Welford };

// The biased variance of v (divide by D) in precision T, by `method`.
template <typename T>
T variance(const std::vector<T>& v, Variance method) {
  const T n = T(v.size());
  if (method == Variance::Welford) {
    T mean = 0, m2 = 0, count = 0;
    for (T x : v) {
      count += 1;
      const T delta = x - mean;
      mean += delta / count;
      m2 += delta * (x - mean);
    }
    return m2 / n;
  }
  T sum = 0, sum_sq = 0;
  for (T x : v) sum += x, sum_sq += x * x;
  const T mean = sum / n;
  if (method == Variance::OnePass) return sum_sq / n - mean * mean;
  T dev = 0;
  for (T x : v) dev += (x - mean) * (x - mean);
  return dev / n;
}

// Lesson 04's backward of one row (gamma = 1) in precision T:
// dx = rstd (dy - mean(dy) - xhat mean(dy xhat)).
template <typename T>
std::vector<T> layernorm_dx(const std::vector<T>& x, const std::vector<T>& dy, Variance method, T eps) {
  const T n = T(x.size());
  T mean = 0;
  for (T v : x) mean += v;
  mean /= n;
  const T rstd = T(1) / std::sqrt(variance(x, method) + eps);
  std::vector<T> xhat(x.size());
  T mean_dy = 0, mean_dy_xhat = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    xhat[i] = (x[i] - mean) * rstd;
    mean_dy += dy[i] / n;
    mean_dy_xhat += dy[i] * xhat[i] / n;
  }
  std::vector<T> dx(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) dx[i] = rstd * (dy[i] - mean_dy - xhat[i] * mean_dy_xhat);
  return dx;
}

template <typename T>
std::vector<T> as(const arma::rowvec& r) {
  std::vector<T> v(r.n_elem);
  for (arma::uword i = 0; i < r.n_elem; ++i) v[i] = T(r(i));
  return v;
}

// Largest |a - b| / largest |b|; infinity if a holds a NaN or an infinity.
template <typename T>
double relative_error(const std::vector<T>& a, const arma::rowvec& b) {
  double worst = 0;
  for (arma::uword i = 0; i < b.n_elem; ++i) {
    if (!std::isfinite(double(a[i]))) return HUGE_VAL;
    worst = std::max(worst, std::abs(double(a[i]) - b(i)));
  }
  return worst / arma::abs(b).max();
}

// %% [markdown]
// ## The double kernel is the engine's
//
// First, the template in double against `ag::layernorm_fused`'s backward on
// the tape, on a row of D = 768 values (GPT-2's width) with mean 3 and
// standard deviation 1: the same formula, so the same numbers to rounding.

// %%
const arma::uword D = 768;
const double kEps = 1e-5;

arma::rowvec make_row(double mean, std::uint64_t seed) { return mean + ag::Rng(seed).normal(1, D, 1.0); }
const arma::rowvec dy_row = ag::Rng(99).normal(1, D, 1.0);

NB_CELL {
  const arma::rowvec x = make_row(3.0, 1);
  Tape tape;
  Var vx = tape.leaf(x, "x");
  Var y = ag::layernorm_fused(vx, tape.constant(arma::ones(1, D)), tape.constant(arma::zeros(1, D)), kEps);
  tape.backward(y, dy_row);
  const std::vector<double> mine = layernorm_dx(as<double>(x), as<double>(dy_row), Variance::TwoPass, kEps);
  const double error = relative_error(mine, arma::rowvec(vx.grad()));
  std::printf("template in double against the tape's fused LayerNorm: relative difference %.3g\n", error);
  nb::check(error < 1e-13, "the double template gives the tape's dx to 1e-13");
}

// %% [markdown]
// ## The variance in float
//
// Rows of 768 values with standard deviation 1 and means $c$ from 0 to $10^4$
// (a row of activations with a large common offset, or pixels in 0 .. 255
// before centring), the variance computed three ways in float, against a
// two-pass variance in long double.

// %%
const std::vector<double> kMeans = {0.0, 10.0, 100.0, 1000.0, 10000.0};

NB_CELL {
  std::printf("%8s %14s %14s %14s %14s %12s\n", "mean c", "one-pass", "two-pass", "Welford", "u c^2 / s^2",
              "one / model");
  std::vector<double> one, two, wel, model;
  for (double c : kMeans) {
    const arma::rowvec x = make_row(c, 2);
    const long double exact = variance(as<long double>(x), Variance::TwoPass);
    auto err = [&](Variance m) { return double(std::abs((variance(as<float>(x), m) - exact) / exact)); };
    one.push_back(err(Variance::OnePass)), two.push_back(err(Variance::TwoPass)), wel.push_back(err(Variance::Welford));
    model.push_back(6e-8 * c * c / double(exact));
    std::printf("%8.0f %14.3g %14.3g %14.3g %14.3g %12.3g\n", c, one.back(), two.back(), wel.back(), model.back(),
                c > 0 ? one.back() / model.back() : 0.0);
  }
  const double u = 6e-8;
  std::printf("largest errors in units of u = 6e-8: two-pass %.0f u, Welford %.0f u\n",
              *std::max_element(two.begin(), two.end()) / u, *std::max_element(wel.begin(), wel.end()) / u);
  nb::check(one.back() > 1, "one-pass in float at c = 1e4: the error is larger than the variance itself");
  bool above_model = true, two_pass_good = true;
  for (std::size_t k = 1; k < kMeans.size(); ++k) above_model = above_model && one[k] > 5 * model[k] && one[k] < 25 * model[k];
  for (double e : two) two_pass_good = two_pass_good && e < 1e-5;
  nb::check(above_model, "for every c > 0 the one-pass error is 5 to 25 times u c^2 / s^2");
  nb::check(two_pass_good, "two-pass in float stays within 1e-5 at every mean");
  nb::check(wel.back() < 1e-3 && wel.back() > 10 * two.back(), "Welford in float: within 1e-3 at c = 1e4, but over 10x two-pass's");
}

// %% [markdown]
// The one-pass error grows as $c^2$, as the model says, and it is 8 to 20
// times the model's $u c^2 / s^2$ (the last column): the model counts one
// rounding of $c^2$, while the float sums of 768 values collect many. At
// $c = 10^4$ the error is 50 times the variance itself: the result is noise,
// and the ratio to the model drops to 8 because an error cannot grow much
// past the value it corrupts. Two-pass subtracts the mean before squaring, so
// it never forms $c^2$, and float keeps it within 6e-6 (about 90 u) at every
// offset. Welford also never forms $c^2$, but its running mean is updated in
// float 768 times, and each deviation x - mean inherits that mean's rounding:
// 5e-4 at $c = 10^4$ (about 9,000 u), a hundred times two-pass's, though still
// usable. Neither is "exact to a few roundoffs" once c is large: their
// errors are far smaller than one-pass's, not zero. Welford needs one pass over the data, which matters when the values
// stream past once; two-pass reads the row twice, which is cheap when it sits
// in cache (llm.c's `doc/layernorm/layernorm.c` computes the mean, then the
// variance, in two loops over the row).
//
// ## The backward in float
//
// Now the whole backward of lesson 04 in float, with each variance, against
// the same backward in double (two-pass), for the same offsets. The error is
// the largest |dx_float - dx_double| relative to the largest |dx_double|.

// %%
NB_CELL {
  nb::Plot plot{"backward_error", "LayerNorm backward in float against double, D = 768, sd 1",
                "mean of the row (c; c = 0 drawn at 1)", "relative error of dx", true, true, {},
                {"set key inside top left", "set label 'c = 0 (drawn at 1)' at 1.1, 1.5e-6"}};
  std::printf("%8s %14s %14s %14s %14s %14s\n", "mean c", "one-pass", "two-pass", "Welford", "sum dx float", "sum dx double");
  std::vector<double> cs, errors[3];
  const Variance methods[] = {Variance::OnePass, Variance::TwoPass, Variance::Welford};
  for (double c : kMeans) {
    const arma::rowvec x = make_row(c, 3);
    const std::vector<double> exact = layernorm_dx(as<double>(x), as<double>(dy_row), Variance::TwoPass, kEps);
    const arma::rowvec reference(exact);
    double row_sum = 0;
    for (int m = 0; m < 3; ++m) {
      const std::vector<float> dx = layernorm_dx(as<float>(x), as<float>(dy_row), methods[m], float(kEps));
      errors[m].push_back(relative_error(dx, reference));
      if (methods[m] == Variance::TwoPass) for (float v : dx) row_sum += v;
    }
    double double_sum = 0;
    for (double v : exact) double_sum += v;
    cs.push_back(std::max(c, 1.0));
    std::printf("%8.0f %14.3g %14.3g %14.3g %14.3g %14.3g\n", c, errors[0].back(), errors[1].back(), errors[2].back(),
                row_sum, double_sum);
  }
  std::printf("the one-pass variance in float at c = 1e4: %.4g (two-pass: %.4g)\n",
              double(variance(as<float>(make_row(1e4, 3)), Variance::OnePass)),
              double(variance(as<float>(make_row(1e4, 3)), Variance::TwoPass)));
  std::vector<double> finite_cs(cs.begin(), cs.end() - 1), finite_one(errors[0].begin(), errors[0].end() - 1);
  plot.add("float, one-pass variance", finite_cs, finite_one, "linespoints pt 7");
  plot.add("float, two-pass", cs, errors[1], "linespoints pt 5");
  plot.add("float, Welford", cs, errors[2], "linespoints pt 9");
  nb::draw(plot);
  nb::check(errors[0][3] > 0.01, "one-pass in float at c = 1e3: dx is off by over 1%");
  nb::check(errors[0].back() == HUGE_VAL, "one-pass in float at c = 1e4: dx is not even finite");
  nb::check(errors[1].front() < 1e-6, "two-pass in float at c = 0: dx within 1e-6 of double");
  nb::check(errors[1].back() > 5 * errors[1].front(), "two-pass in float loses over 5x from c = 0 to 1e4");
  bool good = true;
  for (int m = 1; m < 3; ++m) for (double e : errors[m]) good = good && e < 1e-4;
  nb::check(good, "two-pass and Welford: dx within 1e-4 of double at every c");
}

// %% [markdown]
// The plot is on a log scale; c = 0 is drawn at 1, and one-pass at $c = 10^4$
// is left out: there its float variance came out negative (printed above),
// so rstd, and every dx, is NaN (the table prints it as inf: the error
// function returns infinity for any NaN or infinity). Before that, one-pass's dx error grows
// with its variance error, like $c^2$ (0.1 at c = 1000). With two-pass or
// Welford the backward stays within 5e-5 of double at every offset tried,
// but it too loses digits as c grows (two-pass: 4e-7 up to c = 100, 5e-6 from
// c = 1000): x itself, rounded to float, carries an absolute error of about
// $u c$ (6e-4 at $c = 10^4$), which passes into x - mean and xhat. dx is less
// sensitive than xhat, because xhat enters it only through the term
// xhat mean(dy xhat), which is small for this dy. The remedy is the one for the
// variance: subtract the mean as early as possible, in the highest precision
// you can afford. The last two columns are lesson 04's J 1 = 0: the rows of
// dx sum to 0 in exact arithmetic. In double the sum grows from 4e-15 at
// c = 0 to 1e-11 at c = 10^4; in float it is 2e-6 to 3e-6 up to c = 100 and
// up to 3e-4 beyond: the same loss of digits with the offset, seen in one
// number.
//
// ## What to remember
//
// - $\mathrm{mean}(x^2) - \mathrm{mean}(x)^2$ cancels catastrophically when the mean is large against the spread:
//   an error of $u c^2 / s^2$, larger than the variance itself at $c = 10^4$ in float.
// - Two-pass and Welford never form $c^2$, so their errors stay far below one-pass's: at c = 10^4 in
//   float, about 90 u (two-pass) and 9,000 u (Welford) against 50 times the variance.
// - Even with a good variance, $\hat{x} = (x - \mathrm{mean}) \, \mathrm{rstd}$ in float carries an error of about $u c / s$.
// - Gradient checks run in double (lesson 05); training can run in float if the statistics are computed
//   with care.
//
// ## Exercises
//
// 1. (medium) Show that one-pass's relative error is of order $u (c^2 + s^2) / s^2$:
//    which two rounding errors dominate?
// 2. (medium) Welford's update m2 += delta * (x - mean) uses the mean before and
//    after the update. Show that it computes sum (x_i - mean)^2 exactly in
//    exact arithmetic.
// 3. (medium) Shift the row by its first element before the one-pass formula
//    (x - x_0): what does the error become, and why is that a cheap fix?
// 4. (easy) In float, how large may c / s be before two-pass's dx error passes
//    1e-3, by the model $u c / s$? Check it against the table.
