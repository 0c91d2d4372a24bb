// GELU (ops/gelu.h): the fused node against the composed one, in value and
// gradient, on ordinary inputs and where random draws never go (tanh
// saturated, x^3 overflowing); the formula's x^3 term; what each saves; and
// that the transformer's feed-forward picks the fused GELU with Impl::Fused.
// The op table's rows gradcheck both on random inputs (tests/test_ops.cpp).
#define BOOST_TEST_MODULE gelu
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <string>

#include "autograd/gradcheck.h"
#include "nn/transformer.h"
#include "ops/ops.h"

using namespace ag;

namespace {

// Value and input gradient of f(x) under dout.
struct Result {
  arma::mat y, dx;
};
Result run(Var (*f)(Var), const arma::mat& x, const arma::mat& dout) {
  Tape tape;
  Var in = tape.leaf(x);
  Var y = f(in);
  tape.backward(y, dout);
  return {y.value(), in.grad()};
}
Result run(Var (*f)(Var), const arma::mat& x) { return run(f, x, arma::ones(arma::size(x))); }

double max_abs(const arma::mat& m) { return m.is_empty() ? 0.0 : arma::abs(m).max(); }

// The formula in long double, with x^3 written out: the reference for one x.
long double gelu_reference(long double x, bool cubic = true) {
  const long double c = std::sqrt(2.0L / 3.14159265358979323846264338327950288L);
  return 0.5L * x * (1.0L + std::tanh(c * (x + (cubic ? 0.044715L * x * x * x : 0.0L))));
}

// Its derivative: 0.5 (1 + t) + 0.5 x (1 - t^2) u'.
long double gelu_slope(long double x) {
  const long double c = std::sqrt(2.0L / 3.14159265358979323846264338327950288L);
  const long double t = std::tanh(c * (x + 0.044715L * x * x * x));
  return 0.5L * (1.0L + t) + 0.5L * x * (1.0L - t * t) * c * (1.0L + 3.0L * 0.044715L * x * x);
}

// The largest distances of f's value and gradient from the formula in long double.
struct Errors {
  double value = 0, grad = 0;
};
Errors errors_from_long_double(Var (*f)(Var), const arma::mat& x) {
  const Result r = run(f, x);
  Errors e;
  for (arma::uword k = 0; k < x.n_elem; ++k) {
    e.value = std::max(e.value, std::fabs(r.y(k) - static_cast<double>(gelu_reference(x(k)))));
    e.grad = std::max(e.grad, std::fabs(r.dx(k) - static_cast<double>(gelu_slope(x(k)))));
  }
  return e;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(fused_and_composed)

// Random x in [-8, 8] and a grid over [-12, 12] (4,400 values, tanh saturated
// at both ends), random dout, and both against the formula in long double.
// Measured: fused and composed 1.8e-15 apart in value and 4.9e-15 in gradient
// (y reaches 12, dx 1.13); against long double the fused value is within
// 8.9e-16 and its gradient within 2.2e-16, the composed value within 8.9e-16
// and its gradient 5.4e-15: its tanh is libmvec's (about 2 ulp), its cube
// a*a*a rounded twice, its gradient the sum of eight nodes' rounded terms
// (2.5e-15 with libm's scalar tanh and pow). The bounds are about twice these.
BOOST_AUTO_TEST_CASE(fused_equals_composed_in_value_and_gradient) {
  Rng rng(5);
  const arma::mat grid = arma::reshape(arma::linspace(-12, 12, 2400), 60, 40);
  const arma::mat x = arma::join_cols(rng.uniform(50, 40, -8.0, 8.0), grid);
  const arma::mat dout = rng.uniform(x.n_rows, x.n_cols, -1.0, 1.0);
  const Result fused = run(gelu_fused, x, dout), composed = run(gelu, x, dout);
  const double value_gap = max_abs(fused.y - composed.y), grad_gap = max_abs(fused.dx - composed.dx);
  BOOST_TEST_MESSAGE("fused vs composed: value " << value_gap << ", gradient " << grad_gap);
  BOOST_TEST(value_gap <= 2e-15);
  BOOST_TEST(grad_gap <= 5e-15);
  const Errors fused_error = errors_from_long_double(gelu_fused, x), composed_error = errors_from_long_double(gelu, x);
  BOOST_TEST_MESSAGE("fused vs long double: value " << fused_error.value << ", gradient " << fused_error.grad);
  BOOST_TEST_MESSAGE("composed vs long double: value " << composed_error.value << ", gradient " << composed_error.grad);
  BOOST_TEST(fused_error.value <= 2e-15);
  BOOST_TEST(fused_error.grad <= 5e-16);
  BOOST_TEST(composed_error.value <= 2e-15);
  BOOST_TEST(composed_error.grad <= 1e-14);
}

// The fused formula keeps the cubic term: at x = 1.5 it moves y by 0.025, and
// the fused value is the long-double formula's to an ulp.
BOOST_AUTO_TEST_CASE(the_cubic_term_is_in_the_formula) {
  for (double x : {-3.0, -1.5, -0.5, 0.25, 1.5, 3.0}) {
    const Result r = run(gelu_fused, arma::mat(1, 1, arma::fill::value(x)));
    const double reference = static_cast<double>(gelu_reference(x));
    BOOST_TEST(std::fabs(r.y(0) - reference) <= 4e-16 * std::max(1.0, std::fabs(reference)), "x = " << x);
  }
  BOOST_TEST(std::fabs(static_cast<double>(gelu_reference(1.5) - gelu_reference(1.5, false))) > 0.02);
}

// Beyond the random draws: the fused gradient against central differences
// on [-6, 6], where tanh bends hardest and starts to saturate.
BOOST_AUTO_TEST_CASE(fused_gradient_checks_on_a_wide_range) {
  const arma::mat x = arma::reshape(arma::linspace(-6, 6, 24), 4, 6);
  const GradcheckReport r = gradcheck([](Tape&, const std::vector<Var>& in) { return gelu_fused(in[0]); }, {x});
  BOOST_TEST(r.passed, r.summary());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(large_inputs)

// Saturated: y = x and dx = 1 from x ~ 7.3 on in both versions. Below -7.3
// the composed y and dx are exactly 0 (1 + tanh u cancels), the fused ones
// tend to 0 (1e-37 at -10) and are exactly 0 from -21 on. No NaN with x^3
// finite (10, 40) or overflowed (1e120, 1e150).
BOOST_AUTO_TEST_CASE(saturated_tanh_gives_x_or_zero_and_no_nan) {
  for (double m : {10.0, 40.0, 1e120, 1e150}) {
    const arma::mat x = {{m, -m}};
    for (Var (*f)(Var) : {gelu_fused, gelu}) {
      const Result r = run(f, x);
      const std::string which = f == gelu_fused ? "gelu_fused" : "gelu";
      BOOST_TEST(r.y.is_finite(), which << " at +-" << m);
      BOOST_TEST(r.dx.is_finite(), which << " at +-" << m);
      BOOST_TEST(r.y(0) == m, which << " at " << m);
      BOOST_TEST(r.dx(0) == 1.0, which << " at " << m);
      const double tail = (f == gelu_fused && m < 21) ? 1e-30 : 0.0;
      BOOST_TEST(std::fabs(r.y(1)) <= tail, which << " at " << -m << ": " << r.y(1));
      BOOST_TEST(std::fabs(r.dx(1)) <= tail, which << " at " << -m << ": " << r.dx(1));
    }
  }
}

// Just below saturation (|u| ~ 17.8 at x = 7), the fused gradient is still
// the long-double formula's derivative (a central difference in long double).
BOOST_AUTO_TEST_CASE(near_saturation_the_gradient_is_the_formulas) {
  for (double x : {-7.0, -5.0, 5.0, 7.0}) {
    const Result r = run(gelu_fused, arma::mat(1, 1, arma::fill::value(x)));
    const long double h = 1e-7L;
    const double slope = static_cast<double>((gelu_reference(x + h) - gelu_reference(x - h)) / (2 * h));
    BOOST_TEST(std::fabs(r.dx(0) - slope) <= 1e-9, "x = " << x << ": " << r.dx(0) << " vs " << slope);
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(memory_and_modules)

// The fused node holds x only; the composed GELU's eight nodes hold x (for
// pow_scalar and mul), tanh's output, and the two factors of the last mul:
// 4x the bytes.
BOOST_AUTO_TEST_CASE(the_fused_node_saves_only_x) {
  Rng rng(2);
  const arma::mat x = rng.uniform(32, 256, -3.0, 3.0);
  const std::size_t x_bytes = x.n_elem * sizeof(double);
  Tape fused_tape, composed_tape;
  Var yf = gelu_fused(fused_tape.leaf(x));
  (void)gelu(composed_tape.leaf(x));
  BOOST_TEST(fused_tape.size() == 2u);
  BOOST_TEST(fused_tape.node(yf.id).op == "gelu_fused");
  BOOST_TEST(fused_tape.saved_bytes() == x_bytes);
  BOOST_TEST(composed_tape.size() == 9u);
  BOOST_TEST(composed_tape.saved_bytes() == 4 * x_bytes);
}

// FeedForward follows the block's Impl: one gelu_fused node and no tanh when
// fused, the composed GELU's tanh and no gelu_fused otherwise.
BOOST_AUTO_TEST_CASE(feed_forward_picks_the_gelu_by_impl) {
  for (Impl impl : {Impl::Composed, Impl::Fused}) {
    Rng rng(3);
    FeedForward ffn("ffn", 8, rng, 0.0, 0, impl);
    Tape tape;
    (void)ffn.forward(tape.leaf(rng.uniform(5, 8, -1.0, 1.0)));
    int fused_nodes = 0, tanh_nodes = 0;
    for (std::size_t id = 0; id < tape.size(); ++id) {
      fused_nodes += tape.node(id).op == "gelu_fused" ? 1 : 0;
      tanh_nodes += tape.node(id).op == "tanh" ? 1 : 0;
    }
    BOOST_TEST(fused_nodes == (impl == Impl::Fused ? 1 : 0), impl_name(impl));
    BOOST_TEST(tanh_nodes == (impl == Impl::Fused ? 0 : 1), impl_name(impl));
  }
}

BOOST_AUTO_TEST_SUITE_END()
