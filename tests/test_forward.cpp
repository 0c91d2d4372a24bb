// Forward mode and second order on the tape (autograd/forward.h, ops/functional.h,
// check/forward_check.h): values that are known exactly, the tape's bookkeeping
// (tangent nodes, NoGrad, anomaly mode, listings), refusals, and planted errors
// the transpose identity must catch.
#define BOOST_TEST_MODULE forward
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <functional>
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

// f must record on the tape the transform gives it: a Var of another tape (or an
// empty one) is refused, naming the transform, instead of reading the wrong tape.
BOOST_AUTO_TEST_CASE(a_function_that_returns_another_tapes_var_is_refused) {
  Tape other;
  Var z = other.leaf(kX);
  const TapeFunction f = [&](Tape&, const std::vector<Var>&) { return sum(exp(z)); };
  const TapeFunction empty = [](Tape&, const std::vector<Var>&) { return Var{}; };
  const arma::mat one(1, 1, arma::fill::ones);
  const std::vector<std::pair<std::string, std::function<void(const TapeFunction&)>>> calls = {
      {"vjp", [&](const TapeFunction& g) { vjp(g, {kX}, one); }},
      {"jvp", [&](const TapeFunction& g) { jvp(g, {kX}, {kX}); }},
      {"jacobian", [&](const TapeFunction& g) { jacobian(g, {kX}, Mode::Forward); }},
      {"jacobian", [&](const TapeFunction& g) { jacobian(g, {kX}, Mode::Reverse); }},
      {"hvp", [&](const TapeFunction& g) { hvp(g, {kX}, {kX}); }},
      {"hessian", [&](const TapeFunction& g) { hessian(g, {kX}); }}};
  for (const auto& [name, call] : calls) {
    for (const TapeFunction* g : {&f, &empty}) {
      const std::string message = error_of([&] { call(*g); });
      BOOST_TEST(message.rfind(name + ": f returned a Var that was not recorded on the tape it was given", 0) == 0,
                 message);
    }
  }
}

// NoGrad inside f makes what it records a constant, as stop_gradient in JAX and
// no_grad inside torch.func.jacrev do: both modes see it, and agree.
BOOST_AUTO_TEST_CASE(no_grad_inside_f_is_a_constant_in_both_modes) {
  const TapeFunction all = [](Tape& t, const std::vector<Var>& x) {
    NoGrad no_grad(t);
    return exp(x[0]);
  };
  const TapeFunction part = [](Tape& t, const std::vector<Var>& x) {  // x * c, c = exp(x) held fixed
    Var c;
    {
      NoGrad no_grad(t);
      c = exp(x[0]);
    }
    return x[0] * c;
  };
  const arma::mat c = arma::diagmat(arma::exp(arma::vectorise(kX)));
  for (const auto& [g, expected] : std::vector<std::pair<TapeFunction, arma::mat>>{{all, 0 * c}, {part, c}}) {
    const Jacobian fwd = jacobian(g, {kX}, Mode::Forward), rev = jacobian(g, {kX}, Mode::Reverse);
    BOOST_TEST(arma::abs(fwd.matrix - expected).max() == 0.0);
    BOOST_TEST(arma::abs(rev.matrix - expected).max() == 0.0);
    BOOST_TEST(arma::abs(arma::vectorise(jvp(g, {kX}, {arma::ones(2, 3)}).tangent) - expected * arma::ones(6)).max() ==
               0.0);
  }
  // Second order sees the same constant: sum(x * c) has gradient c and Hessian 0.
  const TapeFunction scalar = [&](Tape& t, const std::vector<Var>& x) { return sum(part(t, x)); };
  BOOST_TEST(arma::abs(hessian(scalar, {kX}).matrix).max() == 0.0);
  BOOST_TEST(arma::abs(hvp(scalar, {kX}, {arma::ones(2, 3)})[0]).max() == 0.0);
}

// An empty Jacobian (no input elements, or an empty output) has its shape and
// nothing in it: no pass runs.
BOOST_AUTO_TEST_CASE(empty_jacobians_have_their_shape) {
  const TapeFunction no_inputs = [](Tape& t, const std::vector<Var>& x) {
    return matmul(x[0], t.constant(arma::ones(0, 3)));  // 2x0 by 0x3: a 2x3 of zeros
  };
  const TapeFunction no_output = [](Tape& t, const std::vector<Var>& x) {
    return matmul(x[0], t.constant(arma::ones(3, 0)));  // 2x3 by 3x0: 2x0
  };
  for (Mode mode : {Mode::Forward, Mode::Reverse}) {
    const Jacobian a = jacobian(no_inputs, {arma::mat(2, 0)}, mode);
    BOOST_TEST(a.matrix.n_rows == 6u);
    BOOST_TEST(a.matrix.n_cols == 0u);
    BOOST_TEST(a.passes == 0u);
    const Jacobian b = jacobian(no_output, {kX}, mode);
    BOOST_TEST(b.matrix.n_rows == 0u);
    BOOST_TEST(b.matrix.n_cols == 6u);
    BOOST_TEST(b.passes == 0u);
  }
  const TapeFunction total = [](Tape&, const std::vector<Var>& x) { return sum(x[0]); };
  const Jacobian H = hessian(total, {arma::mat(0, 3)});
  BOOST_TEST(H.matrix.n_elem == 0u);
  BOOST_TEST(H.passes == 0u);
}

BOOST_AUTO_TEST_CASE(parameter_seeds_refuses_a_null_parameter) {
  Tape tape;
  Parameter p("w", arma::mat(1, 2, arma::fill::ones));
  Var w = tape.param(p);
  sum(w);
  const std::string message =
      error_of([&] { parameter_seeds(tape, {&p, nullptr}, {arma::mat(1, 2), arma::mat(1, 2)}); });
  BOOST_TEST(message == "parameter_seeds: parameter 1 is a null pointer", message);
}

// Each of hessian()'s passes gives its tangent nodes back to the tape before the
// next one: a JVP rule that looks at the tape sees the same size in every pass,
// whatever the number of passes (before, pass j saw j passes' nodes).
BOOST_AUTO_TEST_CASE(hessian_passes_do_not_accumulate_on_the_tape) {
  std::vector<std::size_t> seen;
  Function probe = scaled_tanh(0, 0);
  const JvpFn rule = probe.jvp;
  probe.jvp = [&seen, rule](const JvpArgs& a) {
    seen.push_back(a.tape.size());
    return rule(a);
  };
  const TapeFunction f = [&](Tape&, const std::vector<Var>& x) { return sum(apply(probe, {x[0]}) * x[0]); };
  std::vector<std::size_t> largest;
  for (arma::uword n : {2u, 8u, 32u}) {
    seen.clear();
    const Jacobian H = hessian(f, {arma::linspace(-1, 1, n)});
    BOOST_TEST(seen.size() == n);
    BOOST_TEST(*std::min_element(seen.begin(), seen.end()) == *std::max_element(seen.begin(), seen.end()));
    largest.push_back(*std::max_element(seen.begin(), seen.end()));
    // d/dx_j of tanh(x_j) + x_j (1 - tanh^2 x_j): the diagonal is right after the tape gave nodes back.
    const arma::vec x = arma::linspace(-1, 1, n), t = arma::tanh(x), s = 1 - t % t;
    BOOST_TEST(arma::abs(H.matrix - arma::diagmat(2 * s - 2 * x % t % s)).max() < 1e-14);
  }
  BOOST_TEST(largest[0] == largest[2]);
}

// J = (1 - c) tanh'(x) with c = 1 - 1e-12: each side's rounding is relative to
// the terms before they cancel (tanh' v and c tanh' v), a trillion times |J v|.
// A correct pair must pass whatever u and v are drawn.
BOOST_AUTO_TEST_CASE(the_transpose_identity_passes_a_jacobian_that_nearly_cancels) {
  const TapeFunction f = [](Tape&, const std::vector<Var>& x) {
    const Var t = tanh(x[0]);
    return t - mul_scalar(t, 1 - 1e-12);
  };
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const TransposeReport r = transpose_identity(f, {kX}, seed);
    BOOST_TEST(r.passed, "seed " << seed << ": " << r.forward << " vs " << r.reverse << ", rel error " << r.rel_error);
  }
}
