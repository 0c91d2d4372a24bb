// Forward mode and second order on the tape (autograd/forward.h, ops/functional.h,
// check/forward_check.h): values that are known exactly, the tape's bookkeeping
// (tangent nodes, NoGrad, anomaly mode, listings), refusals, and planted errors
// the transpose identity must catch.
#define BOOST_TEST_MODULE forward
#include <boost/test/unit_test.hpp>

#include <string>

#include "autograd/custom_op.h"
#include "autograd/forward.h"
#include "check/forward_check.h"
#include "check/listing.h"
#include "ops/functional.h"
#include "ops/ops.h"

using namespace ag;

namespace {

template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

// f(x) = sum(x^3) + sum(x * w): grad 3 x^2 + w, H = diag(6 x).
const arma::mat kW = {{0.5, -1.0, 2.0}, {1.5, 0.25, -0.75}};
Var cubic(Tape& t, const std::vector<Var>& x) {
  return sum(pow_scalar(x[0], 3.0)) + sum(x[0] * t.constant(kW));
}

// A matrix-valued function of two inputs: tanh(A B) + A^2 row-summed.
Var two_inputs(Tape&, const std::vector<Var>& x) {
  return tanh(matmul(x[0], x[1])) + sum(square(x[0]), 1);
}

// tanh as a custom op whose JVP is scaled by (1 + error): a planted mistake.
Function scaled_tanh(double jvp_error, double vjp_error) {
  Function f{"planted_tanh", [](const Inputs& x) { return arma::mat(arma::tanh(x[0])); },
             [vjp_error](const Inputs&, const arma::mat& y, const arma::mat& dy) {
               return Grads{arma::mat(dy % (1 - arma::square(y)) * (1 + vjp_error))};
             }};
  f.jvp = [jvp_error](const JvpArgs& a) { return (1 + jvp_error) * (a.dx[0] * (1.0 - square(a.y))); };
  return f;
}

const arma::mat kX = {{0.3, -0.7, 1.1}, {0.9, -0.2, 0.6}};

}  // namespace

BOOST_AUTO_TEST_CASE(jvp_and_hvp_of_a_cubic_are_exact) {
  const arma::mat v = {{1, 2, -1}, {0.5, -3, 0.25}};
  const JvpResult r = jvp(cubic, {kX}, {v});
  const double expected = arma::accu((3 * arma::square(kX) + kW) % v);
  BOOST_TEST(r.tangent(0) == expected, boost::test_tools::tolerance(1e-14));
  const arma::mat hv = hvp(cubic, {kX}, {v})[0];
  BOOST_TEST(arma::abs(hv - 6 * kX % v).max() < 1e-14);
  const Jacobian H = hessian(cubic, {kX});
  BOOST_TEST(H.passes == 6u);
  BOOST_TEST(arma::abs(H.matrix - arma::diagmat(6 * arma::vectorise(kX))).max() < 1e-14);
}

BOOST_AUTO_TEST_CASE(jacobian_both_ways_agrees_and_counts_passes) {
  const arma::mat a = {{0.2, -0.4, 0.1}, {0.5, 0.3, -0.6}}, b = {{0.7, -0.1}, {0.2, 0.4}, {-0.3, 0.9}};
  const Jacobian fwd = jacobian(two_inputs, {a, b}, Mode::Forward);
  const Jacobian rev = jacobian(two_inputs, {a, b}, Mode::Reverse);
  BOOST_TEST(fwd.passes == 12u);  // 6 + 6 input elements
  BOOST_TEST(rev.passes == 4u);   // a 2x2 output
  BOOST_TEST(fwd.matrix.n_rows == 4u);
  BOOST_TEST(fwd.matrix.n_cols == 12u);
  BOOST_TEST(arma::abs(fwd.matrix - rev.matrix).max() < 1e-15);
  BOOST_TEST(arma::abs(fwd.matrix).max() > 0.1);
}

BOOST_AUTO_TEST_CASE(tangents_on_some_inputs_only) {
  const arma::mat a = {{0.2, -0.4, 0.1}, {0.5, 0.3, -0.6}}, b = {{0.7, -0.1}, {0.2, 0.4}, {-0.3, 0.9}};
  const arma::mat va = {{1, 0, 0}, {0, 0, 0}};
  const Jacobian J = jacobian(two_inputs, {a, b}, Mode::Reverse);
  const JvpResult r = jvp(two_inputs, {a, b}, {va, arma::mat()});
  BOOST_TEST(arma::abs(arma::vectorise(r.tangent) - J.matrix.col(0)).max() < 1e-15);
  BOOST_CHECK_THROW(jvp(two_inputs, {a, b}, {va}), Error);  // one tangent per input
  BOOST_CHECK_THROW(jvp(two_inputs, {a, b}, {b, arma::mat()}), Error);  // a's tangent is 3x2
}

BOOST_AUTO_TEST_CASE(tangent_nodes_are_marked_and_listed) {
  Tape tape;
  Var x = tape.leaf(kX);
  Var y = sum(tanh(x));
  Var v = tape.constant(arma::ones(2, 3));  // the seed: the caller's, not a tangent node
  const std::size_t primal = tape.size();
  Var dy = push_tangents(y, {{x, v}});
  BOOST_TEST(tape.size() > primal);
  for (std::size_t i = 0; i < tape.size(); ++i) BOOST_TEST(tape.node(i).tangent == (i >= primal), "node " << i);
  const std::string listing = format_tape(tape);
  BOOST_TEST(listing.find("tangent: ") != std::string::npos);
  BOOST_TEST(listing.find("of them tangents") != std::string::npos);
  BOOST_TEST(dy.item() == arma::accu(1 - arma::square(arma::tanh(kX))), boost::test_tools::tolerance(1e-14));
  // The tangent depends on x, so reverse mode differentiates it: H v of sum(tanh x) with v = 1.
  tape.backward(dy);
  const arma::mat t = arma::tanh(kX);
  BOOST_TEST(arma::abs(x.grad() - (-2 * t % (1 - t % t))).max() < 1e-14);
}

BOOST_AUTO_TEST_CASE(forward_mode_under_no_grad_saves_nothing) {
  Tape tape;
  Var x = tape.leaf(kX);
  NoGrad guard(tape);
  Var y = sum(exp(x) * x);
  Var dy = push_tangents(y, {{x, tape.constant(arma::ones(2, 3))}});
  BOOST_TEST(dy.item() == arma::accu(arma::exp(kX) % (1 + kX)), boost::test_tools::tolerance(1e-14));
  BOOST_TEST(tape.saved_bytes() == 0u);
  BOOST_TEST(!tape.node(dy.id).requires_grad);
}

BOOST_AUTO_TEST_CASE(anomaly_in_a_tangent_names_the_node) {
  Tape tape;
  tape.set_anomaly_mode(true);
  Var x = tape.leaf(arma::mat{{0.0, 1.0}});
  Var y = sqrt(x);  // finite at 0; its tangent da / (2 y) is not
  const std::string message = error_of([&] { push_tangents(y, {{x, tape.constant(arma::mat{{1.0, 1.0}})}}); });
  BOOST_TEST(message.find("anomaly") != std::string::npos, message);
  BOOST_TEST(message.find("in the tangent of 'sqrt' (node 1") != std::string::npos, message);
}

BOOST_AUTO_TEST_CASE(a_node_without_a_rule_is_refused_by_name) {
  Function no_jvp{"my_square", [](const Inputs& x) { return arma::mat(arma::square(x[0])); },
                  [](const Inputs& x, const arma::mat&, const arma::mat& dy) { return Grads{2 * x[0] % dy}; }};
  const TapeFunction f = [&](Tape&, const std::vector<Var>& x) { return sum(apply(no_jvp, {x[0]})); };
  const std::string message = error_of([&] { jvp(f, {kX}, {kX}); });
  BOOST_TEST(message.find("'my_square'") != std::string::npos, message);
  BOOST_TEST(message.find("no JVP rule") != std::string::npos, message);
  // Reverse mode through it still works.
  BOOST_TEST(arma::abs(vjp(f, {kX}, arma::ones(1, 1)).cotangents[0] - 2 * kX).max() < 1e-15);
}

BOOST_AUTO_TEST_CASE(a_custom_op_with_a_jvp_works_to_second_order) {
  const Function f = scaled_tanh(0, 0);
  const TapeFunction g = [&](Tape&, const std::vector<Var>& x) { return sum(apply(f, {x[0]})); };
  const arma::mat v = arma::ones(2, 3);
  const arma::mat t = arma::tanh(kX);
  BOOST_TEST(arma::abs(hvp(g, {kX}, {v})[0] - (-2 * t % (1 - t % t))).max() < 1e-14);
  BOOST_TEST(check_forward(g, {kX}, 2).passed, check_forward(g, {kX}, 2).summary());
}

BOOST_AUTO_TEST_CASE(seeds_are_checked) {
  Tape tape;
  Var x = tape.leaf(kX);
  Var y = sum(x);
  BOOST_CHECK_THROW(push_tangents(y, {{x, tape.constant(arma::ones(3, 2))}}), Error);  // wrong shape
  Var t = tape.constant(arma::ones(2, 3));
  BOOST_CHECK_THROW(push_tangents(y, {{x, t}, {x, t}}), Error);  // seeded twice
  BOOST_TEST(push_tangents(y, {}).item() == 0.0);  // no seed: a zero tangent
}

BOOST_AUTO_TEST_CASE(hvp_needs_a_scalar_output) {
  const std::string message = error_of([&] { hvp(two_inputs, {kX, kX.t()}, {kX, kX.t()}); });
  BOOST_TEST(message.find("scalar") != std::string::npos, message);
}

// The planted errors: a JVP (or VJP) 1e-9 relative off; the transpose identity
// holds to 1e-12 for the right pair and fails for either wrong one.
BOOST_AUTO_TEST_CASE(the_transpose_identity_catches_a_planted_error_of_1e_9) {
  const arma::mat a = {{0.2, -0.4, 0.1}, {0.5, 0.3, -0.6}}, b = {{0.7, -0.1}, {0.2, 0.4}, {-0.3, 0.9}};
  for (const auto& [jvp_error, vjp_error] : std::vector<std::pair<double, double>>{{0, 0}, {1e-9, 0}, {0, 1e-9}}) {
    const Function planted = scaled_tanh(jvp_error, vjp_error);
    const TapeFunction f = [&](Tape&, const std::vector<Var>& x) {
      return apply(planted, {matmul(x[0], x[1])}) + sum(square(x[0]), 1);
    };
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
      const TransposeReport r = transpose_identity(f, {a, b}, seed);
      const bool right = jvp_error == 0 && vjp_error == 0;
      BOOST_TEST(r.passed == right, "jvp error " << jvp_error << ", vjp error " << vjp_error << ", seed " << seed
                                                 << ": rel error " << r.rel_error);
    }
  }
}
