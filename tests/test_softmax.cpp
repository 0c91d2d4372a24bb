// Softmax and log-softmax (ops/softmax.h): the fused ops against the composed
// ones, the extremes a language model's logits and a causal mask produce
// (large offsets, -inf entries, a row of nothing but -inf), anomaly mode, and
// what the fused node saves. The op table's rows gradcheck both versions on
// random inputs (tests/test_ops.cpp); these are the cases random draws miss.
#define BOOST_TEST_MODULE softmax
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

#include "autograd/gradcheck.h"
#include "ops/ops.h"

using namespace ag;
namespace tt = boost::test_tools;

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

// Value and input gradient of f(x) under dout.
struct Result {
  arma::mat y, dx;
};
Result run(Var (*f)(Var, int), const arma::mat& x, int dim, const arma::mat& dout) {
  Tape tape;
  Var in = tape.leaf(x);
  Var y = f(in, dim);
  tape.backward(y, dout);
  return {y.value(), in.grad()};
}

double max_abs(const arma::mat& m) { return m.is_empty() ? 0.0 : arma::abs(m).max(); }

}  // namespace

BOOST_AUTO_TEST_SUITE(fused_and_composed)

// The two agree to rounding on random logits in [-4, 4], along both dims.
// Measured: 1.8e-15 apart in value at most (one ulp of a log-probability near
// -8) and 4.4e-16 in gradient; the bounds are about twice that.
BOOST_AUTO_TEST_CASE(fused_equals_composed_in_value_and_gradient) {
  Rng rng(11);
  const arma::mat x = rng.uniform(6, 7, -4.0, 4.0);
  double worst_value = 0, worst_grad = 0;
  for (int dim : {0, 1, -1, -2}) {
    const arma::mat dout = rng.uniform(6, 7, -1.0, 1.0);
    const Result fs = run(softmax, x, dim, dout), cs = run(softmax_composed, x, dim, dout);
    const Result fl = run(log_softmax, x, dim, dout), cl = run(log_softmax_composed, x, dim, dout);
    worst_value = std::max({worst_value, max_abs(fs.y - cs.y), max_abs(fl.y - cl.y)});
    worst_grad = std::max({worst_grad, max_abs(fs.dx - cs.dx), max_abs(fl.dx - cl.dx)});
  }
  BOOST_TEST_MESSAGE("fused vs composed: value " << worst_value << ", gradient " << worst_grad);
  BOOST_TEST(worst_value <= 4e-15);
  BOOST_TEST(worst_grad <= 1e-15);
}

BOOST_AUTO_TEST_CASE(rows_sum_to_one_and_dims_follow_pytorch) {
  const arma::mat x{{1.0, 2.0, 3.0}, {-1.0, 0.0, 4.0}};
  const arma::mat ones(2, 3, arma::fill::ones);
  const arma::mat across = run(softmax, x, 1, ones).y, down = run(softmax, x, 0, ones).y;
  BOOST_TEST(arma::approx_equal(arma::sum(across, 1), arma::mat(2, 1, arma::fill::ones), "absdiff", 1e-15));
  BOOST_TEST(arma::approx_equal(arma::sum(down, 0), arma::mat(1, 3, arma::fill::ones), "absdiff", 1e-15));
  // softmax({1, 2, 3}) = e^k / (e + e^2 + e^3)
  const double z = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  BOOST_TEST(across(0, 2) == std::exp(3.0) / z, tt::tolerance(1e-15));
  BOOST_TEST(run(log_softmax, x, -1, ones).y(0, 0) == 1.0 - std::log(z), tt::tolerance(1e-15));
  Tape tape;
  try {
    (void)softmax(tape.leaf(x), 2);
    BOOST_ERROR("dim 2 must throw");
  } catch (const Error& e) {
    BOOST_TEST(std::string(e.what()).rfind("softmax: dim must be 0", 0) == 0u, e.what());
  }
}

// The fused node keeps its output and nothing else; the composed one records three nodes.
BOOST_AUTO_TEST_CASE(the_fused_node_saves_only_its_output) {
  Tape tape;
  Var x = tape.leaf(Rng(3).uniform(4, 5, -1.0, 1.0));
  for (Var y : {softmax(x, 1), log_softmax(x, 1)}) {
    const Node& n = tape.node(y.id);
    BOOST_TEST(n.saved.size() == 1u);
    BOOST_TEST(n.saved[0] == y.id);
    BOOST_TEST(tape.node_saved_bytes(y.id) == 20 * sizeof(double));
  }
  const std::size_t before = tape.size();
  (void)softmax_composed(x, 1);
  BOOST_TEST(tape.size() - before == 3u);  // logsumexp, sub, exp
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(extremes)

// Logits 1e3 apart from 0: exp(1000) overflows, the max-shifted forms do not.
BOOST_AUTO_TEST_CASE(large_offsets_give_the_softmax_of_the_differences) {
  const arma::mat base{{0.0, 1.0, 2.0}, {0.5, -0.5, 0.0}};
  arma::mat x = base;
  x.row(0) += 1000.0;
  x.row(1) -= 1000.0;
  const arma::mat dout{{0.3, -0.2, 0.1}, {1.0, 0.5, -1.0}};
  for (auto f : {softmax, softmax_composed, log_softmax, log_softmax_composed}) {
    const Result big = run(f, x, 1, dout), small = run(f, base, 1, dout);
    BOOST_TEST(big.y.is_finite());
    BOOST_TEST(big.dx.is_finite());
    BOOST_TEST(max_abs(big.y - small.y) <= 1e-12);
    BOOST_TEST(max_abs(big.dx - small.dx) <= 1e-12);
  }
  const GradcheckReport r = gradcheck([](Tape&, const std::vector<Var>& in) { return softmax(in[0], 1); }, {x});
  BOOST_TEST(r.passed, r.summary());
}

// A masked row: the -inf entries get probability 0 (log-probability -inf) and
// no gradient; the rest is the softmax of the finite entries.
BOOST_AUTO_TEST_CASE(minus_infinity_entries_get_zero_and_no_gradient) {
  const arma::mat x{{0.0, -inf, 1.0}, {2.0, 3.0, -inf}};
  const arma::mat dout{{0.5, 2.0, -1.0}, {1.0, -0.5, 3.0}};
  const double e = std::exp(1.0);
  for (auto f : {softmax, softmax_composed}) {
    const Result r = run(f, x, 1, dout);
    BOOST_TEST(r.y(0, 1) == 0.0);
    BOOST_TEST(r.y(0, 2) == e / (1 + e), tt::tolerance(1e-15));
    BOOST_TEST(r.y(1, 0) == 1 / (1 + e), tt::tolerance(1e-15));
    BOOST_TEST(r.dx.is_finite());
    BOOST_TEST(r.dx(0, 1) == 0.0);
    BOOST_TEST(r.dx(1, 2) == 0.0);
  }
  for (auto f : {log_softmax, log_softmax_composed}) {
    const Result r = run(f, x, 1, dout);
    BOOST_TEST(r.y(0, 1) == -inf);
    BOOST_TEST(r.y(0, 0) == -std::log(1 + e), tt::tolerance(1e-15));
    BOOST_TEST(r.dx.is_finite());
  }
}

// A row with nothing left has no distribution: NaN, PyTorch's answer, and
// only in that row. Anomaly mode names the node that produced it.
BOOST_AUTO_TEST_CASE(a_row_of_only_minus_infinity_is_nan) {
  const arma::mat x{{-inf, -inf}, {1.0, 2.0}};
  for (auto f : {softmax, log_softmax}) {
    const Result r = run(f, x, 1, arma::mat(2, 2, arma::fill::ones));
    BOOST_TEST(r.y.row(0).has_nan());
    BOOST_TEST(r.y.row(1).is_finite());
  }
  Tape tape;
  Var logits = tape.constant(x);
  tape.set_anomaly_mode(true);
  try {
    (void)softmax(logits, 1);
    BOOST_ERROR("anomaly mode must refuse the NaN row");
  } catch (const AnomalyError& e) {
    BOOST_TEST(std::string(e.what()).find("'softmax(dim=1)'") != std::string::npos, e.what());
  }
}

// The attention: a causal mask of -inf, then softmax, with anomaly
// mode on. The fused softmax never holds an inf; the composed one does
// (x - logsumexp is -inf where masked), so anomaly mode stops it there.
BOOST_AUTO_TEST_CASE(a_causal_mask_then_softmax_passes_anomaly_mode) {
  const arma::uword T = 4;
  const arma::mat scores = Rng(5).uniform(T, T, -2.0, 2.0);
  Tape tape;
  tape.set_anomaly_mode(true);
  Var x = tape.leaf(scores);
  Var p = softmax(masked_fill(x, causal_mask(T), -inf), 1);
  tape.backward(sum(p * tape.constant(Rng(6).uniform(T, T, -1.0, 1.0))));
  BOOST_TEST(arma::approx_equal(arma::sum(p.value(), 1), arma::mat(T, 1, arma::fill::ones), "absdiff", 1e-15));
  BOOST_TEST(arma::accu(arma::trimatu(p.value(), 1)) == 0.0);       // nothing from the future
  BOOST_TEST(arma::accu(arma::abs(arma::trimatu(x.grad(), 1))) == 0.0);
  BOOST_TEST(x.grad().is_finite());
  BOOST_CHECK_THROW(softmax_composed(masked_fill(x, causal_mask(T), -inf), 1), AnomalyError);
  const TapeFunction masked_softmax = [T](Tape&, const std::vector<Var>& in) {
    return softmax(masked_fill(in[0], causal_mask(T), -inf), 1);
  };
  const GradcheckReport r = gradcheck(masked_softmax, {scores});
  BOOST_TEST(r.passed, r.summary());
}

BOOST_AUTO_TEST_CASE(empty_inputs_give_empty_results) {
  for (auto f : {softmax, log_softmax, softmax_composed, log_softmax_composed}) {
    for (int dim : {0, 1}) {
      for (const arma::mat& x : {arma::mat(3, 0), arma::mat(0, 4), arma::mat(0, 0)}) {
        const Result r = run(f, x, dim, x);
        BOOST_TEST(shape_str(r.y) == shape_str(x));
        BOOST_TEST(shape_str(r.dx) == shape_str(x));
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
