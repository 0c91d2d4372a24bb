// The fuzzer's random graphs in forward mode and at second order, and a
// planted JVP error found and shrunk.
#define BOOST_TEST_MODULE forward_fuzz
#include <boost/test/unit_test.hpp>

#include "autograd/custom_op.h"
#include "check/fuzz.h"
#include "ops/ops.h"

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
