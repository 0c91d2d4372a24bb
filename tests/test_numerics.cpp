#define BOOST_TEST_MODULE numerics
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

#include "autograd/gradcheck.h"
#include "autograd/parameter.h"
#include "ops/layernorm.h"
#include "ops/ops.h"

using namespace ag;
namespace tt = boost::test_tools;

namespace {
arma::mat row(std::initializer_list<double> v) { return arma::mat(arma::rowvec(v)); }

bool finite_and_not_empty(const arma::mat& m) { return m.n_elem > 0 && m.is_finite(); }
}  // namespace

BOOST_AUTO_TEST_SUITE(variance)

BOOST_AUTO_TEST_CASE(an_offset_of_1e8_changes_neither_variance_nor_its_gradient) {
  const arma::mat x = {{0.3, -1.2, 0.8, 2.0, -0.4}, {1.5, 0.1, -0.7, 0.2, 0.9}};
  Tape tape;
  Var small = tape.leaf(x);
  Var large = tape.leaf(x + 1e8);
  Var v_small = var(small, -1), v_large = var(large, -1);
  // Rounding x + 1e8 costs about 1e-8 per element; cancellation would cost everything.
  BOOST_TEST(arma::approx_equal(v_small.value(), v_large.value(), "reldiff", 1e-7));
  tape.backward(sum(v_small) + sum(v_large));
  BOOST_TEST(arma::approx_equal(small.grad(), large.grad(), "absdiff", 1e-7));
  // d var / dx = 2 (x - mean) / D
  const arma::mat expected = 2.0 * (x - arma::repmat(arma::mean(x, 1), 1, 5)) / 5.0;
  BOOST_TEST(arma::approx_equal(large.grad(), expected, "absdiff", 1e-7));
}

BOOST_AUTO_TEST_CASE(down_columns_and_unbiased_too) {
  const arma::mat x = {{1.0, 4.0}, {2.0, 6.0}, {3.0, 11.0}};
  Tape tape;
  Var v = var(tape.leaf(x + 1e8), 0, true);
  BOOST_TEST(v.value()(0, 0) == 1.0, tt::tolerance(1e-8));
  BOOST_TEST(v.value()(0, 1) == 13.0, tt::tolerance(1e-8));
}

BOOST_AUTO_TEST_CASE(the_textbook_formula_would_cancel) {
  // Why var is two-pass: E[x^2] - E[x]^2 composed from ops loses every digit at 1e8.
  Tape tape;
  Var x = tape.leaf(row({1e8 + 1, 1e8 + 2, 1e8 + 3, 1e8 + 4}));
  const double naive = (mean(square(x)) - square(mean(x))).value()(0);
  BOOST_TEST(var(x, -1).value()(0) == 1.25, tt::tolerance(1e-9));
  BOOST_TEST(std::abs(naive - 1.25) > 0.1, "naive E[x^2] - E[x]^2 = " << naive);
}

BOOST_AUTO_TEST_CASE(layernorm_of_rows_offset_by_1e8_matches_the_unshifted_rows) {
  const arma::mat x = {{0.3, -1.2, 0.8, 2.0}, {1.5, 0.1, -0.7, 0.2}};
  Tape tape;
  Var gamma = tape.leaf(row({1.0, 2.0, 0.5, -1.0})), beta = tape.leaf(row({0.1, 0.0, -0.1, 0.2}));
  for (bool fused : {false, true}) {
    Var a = tape.leaf(x), b = tape.leaf(x + 1e8);
    Var ya = fused ? layernorm_fused(a, gamma, beta) : layernorm_composed(a, gamma, beta);
    Var yb = fused ? layernorm_fused(b, gamma, beta) : layernorm_composed(b, gamma, beta);
    BOOST_TEST(arma::approx_equal(ya.value(), yb.value(), "absdiff", 1e-6), (fused ? "fused" : "composed"));
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(logsumexp_stability)

BOOST_AUTO_TEST_CASE(plus_and_minus_1000_in_either_dim) {
  const arma::mat x = {{1000.0, -1000.0}, {1000.0, 999.0}};
  Tape tape;
  Var a = tape.leaf(x);
  Var rows = logsumexp(a, 1), cols = logsumexp(a, 0);
  BOOST_TEST(rows.value()(0) == 1000.0, tt::tolerance(1e-12));
  BOOST_TEST(rows.value()(1) == 1000.0 + std::log1p(std::exp(-1.0)), tt::tolerance(1e-12));
  BOOST_TEST(cols.value()(0) == 1000.0 + std::log(2.0), tt::tolerance(1e-12));
  BOOST_TEST(cols.value()(1) == 999.0, tt::tolerance(1e-12));
  tape.backward(sum(rows));
  // The gradient is the softmax of each row: (1, 0) and (1/(1+e^-1), e^-1/(1+e^-1)).
  BOOST_TEST(a.grad()(0, 0) == 1.0, tt::tolerance(1e-12));
  BOOST_TEST(a.grad()(0, 1) == 0.0, tt::tolerance(1e-300));
  BOOST_TEST(a.grad()(1, 1) == std::exp(-1.0) / (1 + std::exp(-1.0)), tt::tolerance(1e-12));
}

BOOST_AUTO_TEST_CASE(gradcheck_passes_far_from_zero) {
  const TapeFunction f = [](Tape&, const std::vector<Var>& x) { return logsumexp(x[0], -1); };
  const GradcheckReport r = gradcheck(f, {arma::mat{{-1000.0, -1001.0, -999.5}, {700.0, 701.0, 702.5}}});
  BOOST_TEST(r.passed, r.summary());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(norms_near_zero)

// A constant row has variance 0: without eps, (x - mean) / sqrt(var) would be 0 / 0.
BOOST_AUTO_TEST_CASE(layernorm_of_a_constant_row_has_finite_gradients) {
  for (bool fused : {false, true}) {
    Tape tape;
    tape.set_anomaly_mode(true);  // any NaN or inf would throw, naming the op
    Var x = tape.leaf(arma::mat(3, 4, arma::fill::value(0.7)));
    Var gamma = tape.leaf(row({1.0, 2.0, 3.0, 4.0})), beta = tape.leaf(row({0.5, 0.5, 0.5, 0.5}));
    Var y = fused ? layernorm_fused(x, gamma, beta) : layernorm_composed(x, gamma, beta);
    tape.backward(y, arma::mat(3, 4, arma::fill::randn));
    BOOST_TEST(arma::approx_equal(y.value(), arma::repmat(beta.value(), 3, 1), "absdiff", 1e-12));
    BOOST_TEST(finite_and_not_empty(x.grad()), (fused ? "fused" : "composed"));
    BOOST_TEST(finite_and_not_empty(gamma.grad()));
    // Every dy_j shifts the row's mean with it: the gradient of a constant row sums to 0.
    BOOST_TEST(arma::abs(arma::sum(x.grad(), 1)).max() < 1e-6);
  }
}

BOOST_AUTO_TEST_CASE(rmsnorm_of_a_zero_row_has_finite_gradients) {
  for (bool fused : {false, true}) {
    Tape tape;
    tape.set_anomaly_mode(true);
    Var x = tape.leaf(arma::mat(2, 3, arma::fill::zeros));
    Var gamma = tape.leaf(row({1.0, -2.0, 0.5}));
    Var y = fused ? rmsnorm_fused(x, gamma) : rmsnorm_composed(x, gamma);
    tape.backward(y, arma::mat(2, 3, arma::fill::ones));
    BOOST_TEST(arma::abs(y.value()).max() == 0.0);
    // At x = 0, dy/dx = gamma / sqrt(eps): large but finite.
    BOOST_TEST(finite_and_not_empty(x.grad()), (fused ? "fused" : "composed"));
    BOOST_TEST(x.grad()(0, 1) == -2.0 / std::sqrt(1e-5), tt::tolerance(1e-6));
  }
}

BOOST_AUTO_TEST_CASE(tiny_rows_pass_gradcheck) {
  // Values around 1e-4, so var ~ 1e-8 << eps = 1e-5: eps dominates and the gradient stays gentle.
  const TapeFunction f = [](Tape&, const std::vector<Var>& x) { return layernorm_fused(x[0], x[1], x[2]); };
  const TapeFunction g = [](Tape&, const std::vector<Var>& x) { return rmsnorm_composed(x[0], x[1]); };
  const arma::mat x = 1e-4 * arma::mat{{1.0, -2.0, 0.5}, {0.3, 0.3, 0.31}};
  const arma::mat gamma = row({1.0, 0.5, -1.5}), beta = row({0.0, 0.1, 0.2});
  BOOST_TEST(gradcheck(f, {x, gamma, beta}).passed);
  BOOST_TEST(gradcheck(g, {x, gamma}).passed);
}

BOOST_AUTO_TEST_CASE(eps_must_be_positive) {
  Tape tape;
  Var x = tape.leaf(arma::mat(2, 3, arma::fill::ones)), gamma = tape.leaf(arma::mat(1, 3, arma::fill::ones));
  BOOST_CHECK_THROW(rmsnorm_composed(x, gamma, 0.0), Error);
  BOOST_CHECK_THROW(rmsnorm_fused(x, gamma, -1e-5), Error);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(overflow)

BOOST_AUTO_TEST_CASE(exp_of_a_large_input_is_silent_inf_without_anomaly_mode) {
  Tape tape;
  Var y = exp(tape.leaf(row({1.0, 800.0})));
  BOOST_TEST(std::isinf(y.value()(1)));  // why anomaly mode exists
}

BOOST_AUTO_TEST_CASE(exp_of_a_large_input_is_an_anomaly_naming_exp) {
  Tape tape;
  tape.set_anomaly_mode(true);
  Var x = tape.leaf(row({1.0, 800.0}), "x");
  try {
    (void)exp(x * 1.0);
    BOOST_ERROR("exp(800) must throw in anomaly mode");
  } catch (const AnomalyError& e) {
    const std::string msg = e.what();
    BOOST_TEST(msg.find("forward of 'exp' (node 2, 1x2)") != std::string::npos, msg);
    BOOST_TEST(msg.find("NaN or inf") != std::string::npos, msg);
  }
  BOOST_TEST(tape.size() == 2u);  // the bad node was not recorded
}

// A training loop whose learning rate is too large: w oscillates with growing
// amplitude until a naively written log(sum(exp(pred))) overflows. Anomaly mode
// stops at that step naming exp, instead of carrying inf into the loss and NaN
// into every later update.
BOOST_AUTO_TEST_CASE(a_diverging_training_loop_stops_at_the_overflowing_exp) {
  Parameter w("w", arma::mat(1, 1, arma::fill::value(1.0)));
  const arma::mat x = arma::mat(arma::colvec{1.0, 2.0, 3.0});
  int step = 0;
  std::string message;
  try {
    for (; step < 100; ++step) {
      Tape tape;
      tape.set_anomaly_mode(true);
      Var pred = matmul(tape.constant(x), tape.param(w));
      Var fit = mean(square(pred - tape.constant(2.0 * x)));
      Var naive_logsumexp = log(sum(exp(pred)));  // overflows once pred > 709
      Var loss = fit + 0.01 * naive_logsumexp;
      w.zero_grad();
      tape.backward(loss);
      w.mutable_value() -= 0.5 * w.grad();  // the step is 4.7 times too large
    }
  } catch (const AnomalyError& e) {
    message = e.what();
  }
  BOOST_TEST(step == 5);  // w: 1, 5.7, -11, 51, -178, 676: exp(3 * 676) overflows
  BOOST_TEST(message.find("forward of 'exp'") != std::string::npos, message);
  BOOST_TEST(w.value().is_finite());
}

BOOST_AUTO_TEST_CASE(pow_half_at_zero_is_an_anomaly_in_backward) {
  Tape tape;
  tape.set_anomaly_mode(true);
  Var x = tape.leaf(row({0.0, 4.0}));
  Var y = sum(pow_scalar(x, 0.5));  // forward fine: 0 and 2; backward 0.5 / sqrt(0) = inf
  try {
    tape.backward(y);
    BOOST_ERROR("the inf gradient must throw in anomaly mode");
  } catch (const AnomalyError& e) {
    const std::string msg = e.what();
    BOOST_TEST(msg.find("backward of 'pow_scalar'") != std::string::npos, msg);
  }
}

BOOST_AUTO_TEST_SUITE_END()

// ops/elementwise.cpp computes a^2 and a^3 as products, and ops/elementwise_unary.cpp
// takes tanh four elements at a time (libmvec) where the machine has AVX2: these
// hold them to the accuracy of the libm functions they replace.
BOOST_AUTO_TEST_SUITE(fast_paths)

namespace {
// |got - exact| in units in the last place of the exact value, rounded to double.
double ulps(double got, long double exact) {
  const double e = static_cast<double>(exact);
  if (e == 0.0) return got == 0.0 ? 0.0 : std::numeric_limits<double>::infinity();
  const double ulp = std::nextafter(std::fabs(e), std::numeric_limits<double>::infinity()) - std::fabs(e);
  return static_cast<double>(std::fabs(static_cast<long double>(got) - exact) / ulp);
}

arma::mat spread_values(arma::uword n) {
  Rng rng(7);
  arma::mat x = rng.normal(n, 1, 3.0);
  x.rows(0, n / 4) *= 1e-4;  // small values, where tanh(x) ~ x
  return x;
}
}  // namespace

BOOST_AUTO_TEST_CASE(pow_2_and_3_are_within_the_ulps_of_libm_pow) {
  const arma::mat x = spread_values(20001);
  Tape tape;
  const arma::mat sq = pow_scalar(tape.leaf(x), 2.0).value(), cube = pow_scalar(tape.leaf(x), 3.0).value();
  double worst_sq = 0, worst_cube = 0, worst_libm = 0;
  for (arma::uword i = 0; i < x.n_elem; ++i) {
    const long double v = x(i);
    worst_sq = std::max(worst_sq, ulps(sq(i), v * v));
    worst_cube = std::max(worst_cube, ulps(cube(i), v * v * v));
    worst_libm = std::max(worst_libm, ulps(std::pow(x(i), 3.0), v * v * v));
  }
  BOOST_TEST_MESSAGE("a^2 " << worst_sq << " ulp, a^3 " << worst_cube << " ulp, libm pow(a, 3) " << worst_libm << " ulp");
  BOOST_TEST(worst_sq <= 0.501);   // one rounding: correctly rounded
  BOOST_TEST(worst_cube <= 1.5);   // two roundings
  BOOST_TEST(worst_libm <= 0.55);  // what it replaced: glibc says 0.52
  // The other powers still go through libm's pow, bit for bit.
  const arma::mat other = pow_scalar(tape.leaf(arma::abs(x) + 0.5), 2.5).value();
  BOOST_TEST(arma::approx_equal(other, arma::pow(arma::abs(x) + 0.5, 2.5), "absdiff", 0.0));
}

BOOST_AUTO_TEST_CASE(tanh_is_as_accurate_as_libm_and_the_same_wherever_a_value_sits) {
  const arma::mat x = spread_values(20003);  // not a multiple of 4: a padded last group
  Tape tape;
  const arma::mat y = tanh(tape.leaf(x)).value();
  double worst = 0, worst_libm = 0;
  for (arma::uword i = 0; i < x.n_elem; ++i) {
    const long double exact = std::tanh(static_cast<long double>(x(i)));
    worst = std::max(worst, ulps(y(i), exact));
    worst_libm = std::max(worst_libm, ulps(std::tanh(x(i)), exact));
  }
  BOOST_TEST_MESSAGE("tanh " << worst << " ulp, libm's scalar tanh " << worst_libm << " ulp");
  BOOST_TEST(worst <= 2.5);
  BOOST_TEST(worst_libm <= 2.5);
  // Each value alone, and the last three again as a group of their own: the same bits.
  for (arma::uword i : {arma::uword(0), arma::uword(1), arma::uword(2), arma::uword(20000), arma::uword(20002)}) {
    BOOST_TEST(tanh(tape.leaf(arma::mat{x(i)})).value()(0) == y(i));
  }
  const arma::mat tail = tanh(tape.leaf(arma::mat(x.rows(20000, 20002)))).value();
  BOOST_TEST(arma::approx_equal(tail, y.rows(20000, 20002), "absdiff", 0.0));
}

BOOST_AUTO_TEST_CASE(tanh_of_the_special_values) {
  const double inf = std::numeric_limits<double>::infinity();
  Tape tape;
  const arma::mat y = tanh(tape.leaf(arma::mat{{0.0, -0.0, inf, -inf, 30.0, -30.0, 1e-300}})).value();
  BOOST_TEST(y(0) == 0.0);
  BOOST_TEST(std::signbit(y(1)));
  BOOST_TEST(y(2) == 1.0);
  BOOST_TEST(y(3) == -1.0);
  BOOST_TEST(y(4) == 1.0);
  BOOST_TEST(y(5) == -1.0);
  BOOST_TEST(y(6) == 1e-300);
  BOOST_TEST(std::isnan(tanh(tape.leaf(arma::mat{std::nan("")})).value()(0)));
}

BOOST_AUTO_TEST_SUITE_END()
