// The fuzzer's random graphs in forward mode and at second order, and a
// planted JVP error found and shrunk.
#define BOOST_TEST_MODULE forward_fuzz
#include <boost/test/unit_test.hpp>

#include "autograd/custom_op.h"
#include "check/fuzz.h"
#include "ops/ops.h"

#include <string>

using namespace ag;

BOOST_AUTO_TEST_CASE(random_graphs_pass_forward_and_second_order) {
  FuzzOptions options;
  options.forward_order = 2;
  const FuzzReport r = fuzz(40, 500, options);
  BOOST_TEST(r.graphs == 40);
  BOOST_TEST(r.failures.empty(), (r.failures.empty() ? "" : r.failures[0].describe()));
  BOOST_TEST(r.op_counts.size() > 20u);  // most rows were drawn
}

// tanh whose JVP is 1e-9 relative too large: gradcheck cannot see it, the
// transpose identity can, and the shrinker keeps the planted op.
BOOST_AUTO_TEST_CASE(a_planted_jvp_error_is_found_and_shrunk) {
  static const Function planted{
      "planted_tanh", [](const Inputs& x) { return arma::mat(arma::tanh(x[0])); },
      [](const Inputs&, const arma::mat& y, const arma::mat& dy) { return Grads{arma::mat(dy % (1 - y % y))}; },
      [](const JvpArgs& a) { return (1 + 1e-9) * (a.dx[0] * (1.0 - square(a.y))); }};
  FuzzOptions options;
  options.custom_ops = {{"planted_tanh", [](Var x) { return apply(planted, {x}); }}};
  options.forward_order = 1;
  const FuzzReport r = fuzz(60, 1, options);
  BOOST_REQUIRE(!r.failures.empty());
  const FuzzFailure& f = r.failures[0];
  BOOST_TEST(f.check.message.find("transpose identity") != std::string::npos, f.check.message);
  BOOST_TEST(f.shrunk.op_count() <= f.graph.op_count());
  BOOST_TEST(f.shrunk.describe().find("planted_tanh") != std::string::npos, f.shrunk.describe());
  // Reverse mode alone passes the same graph: the error is far below finite differences' resolution.
  BOOST_TEST(check_graph(f.graph, options.gradcheck).passed);
}

// tanh(x) - c tanh(x) with c = 1 - 1e-12: J nearly vanishes, every op is right,
// and the graph passes at both orders.
BOOST_AUTO_TEST_CASE(a_graph_whose_jacobian_nearly_cancels_passes) {
  FuzzGraph g;
  g.seed = 7;
  g.steps = {{"leaf", {}, {}, arma::mat{{0.3, -0.7, 1.1}, {0.9, -0.2, 0.6}}},
             {"tanh", {0}, {}, {}},
             {"mul_scalar", {1}, {1 - 1e-12}, {}},
             {"sub", {1, 2}, {}, {}}};
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    GradcheckOptions options;
    options.seed = static_cast<unsigned>(seed);
    for (int order : {1, 2}) {
      const FuzzCheck c = check_graph_forward(g, order, options);
      BOOST_TEST(c.passed, "order " << order << ", seed " << seed << ":\n" << c.message);
    }
  }
}

// The hint reruns exactly what failed: the forward order is part of it.
BOOST_AUTO_TEST_CASE(the_rerun_hint_keeps_the_forward_order) {
  static const Function planted{
      "planted_tanh", [](const Inputs& x) { return arma::mat(arma::tanh(x[0])); },
      [](const Inputs&, const arma::mat& y, const arma::mat& dy) { return Grads{arma::mat(dy % (1 - y % y))}; },
      [](const JvpArgs& a) { return (1 + 1e-9) * (a.dx[0] * (1.0 - square(a.y))); }};
  for (int order : {1, 2}) {
    FuzzOptions options;
    options.custom_ops = {{"planted_tanh", [](Var x) { return apply(planted, {x}); }}};
    options.forward_order = order;
    const FuzzReport r = fuzz(60, 1, options);
    BOOST_REQUIRE(!r.failures.empty());
    const std::string text = r.failures[0].describe();
    const std::string rerun = "(rerun it alone: autograd fuzz --graphs 1 --seed " + std::to_string(r.failures[0].seed) +
                              " --forward-order " + std::to_string(order) + ")";
    BOOST_TEST(text.find(rerun) != std::string::npos, text);
  }
  // Reverse mode alone: no forward-order option to repeat.
  FuzzFailure f;
  f.seed = 3;
  BOOST_TEST(f.describe().find("--seed 3)") != std::string::npos, f.describe());
}

// Correct graphs the fuzzer flagged. Seed 367 draws softmax(dim=0) of inputs
// tens apart: J nearly vanishes inside the op (transpose rel error 3e-10
// against the ends' scale). Seed 6448 draws div(v, v), tanh, div(w, w): J is
// exactly zero, the forward pass gives exactly 0 and the backward 2e-33 (the
// shares u / w and -u w / w^2 cancel up to rounding). Both pass at both orders.
BOOST_AUTO_TEST_CASE(seeds_367_and_6448_whose_jacobians_vanish_pass) {
  for (std::uint64_t seed : {367u, 6448u}) {
    for (int order : {1, 2}) {
      FuzzOptions options;
      options.forward_order = order;
      const FuzzReport r = fuzz(1, seed, options);
      BOOST_TEST(r.failures.empty(), "seed " << seed << ", order " << order << ": "
                                            << (r.failures.empty() ? "" : r.failures[0].describe()));
    }
  }
}
