#define BOOST_TEST_MODULE fuzz
#include <boost/test/unit_test.hpp>

#include <set>

#include "check/fuzz.h"
#include "check/op_table.h"
#include "ops/ops.h"

using namespace ag;

namespace {

// The suite's run: 500 graphs from seed 1, shared by the cases that inspect it.
const FuzzReport& suite_run() {
  static const FuzzReport report = fuzz(500, 1);
  return report;
}

// y = a^2 with a wrong backward (3 a dy instead of 2 a dy): the bug to find.
Var bad_square(Var a) {
  Tape& t = tape_of("bad_square", a);
  return t.record(
      "bad_square", {a}, arma::square(a.value()),
      [](Tape& t, const Node& n) { t.accumulate(n.inputs[0], 3.0 * n.grad % t.value(n.inputs[0])); },
      Saved{{a}});
}

// y = 2a whose backward sends a gradient of the wrong shape.
Var bad_shape(Var a) {
  Tape& t = tape_of("bad_shape", a);
  return t.record("bad_shape", {a}, 2.0 * a.value(), [](Tape& t, const Node& n) {
    t.accumulate(n.inputs[0], arma::mat(n.grad.n_rows + 1, n.grad.n_cols, arma::fill::ones));
  });
}

// Counts steps whose value feeds two or more later steps.
int reused_values(const FuzzGraph& g) {
  std::vector<int> uses(g.steps.size(), 0);
  for (const FuzzStep& s : g.steps) {
    for (int a : s.args) ++uses[a];
  }
  int n = 0;
  for (int u : uses) n += u >= 2 ? 1 : 0;
  return n;
}

// A binary op whose two inputs have different shapes (so one is broadcast).
bool has_broadcast(const FuzzGraph& g) {
  for (const FuzzStep& s : g.steps) {
    if (s.args.size() == 2 && s.op != "matmul" &&
        arma::size(g.steps[s.args[0]].value) != arma::size(g.steps[s.args[1]].value)) {
      return true;
    }
  }
  return false;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(random_graphs)

BOOST_AUTO_TEST_CASE(five_hundred_graphs_match_finite_differences) {
  const FuzzReport& r = suite_run();
  BOOST_TEST(r.graphs == 500);
  BOOST_TEST(r.failures.empty(), (r.failures.empty() ? "" : r.failures[0].describe()));
}

BOOST_AUTO_TEST_CASE(every_row_of_the_op_table_is_drawn) {
  const FuzzReport& r = suite_run();
  for (const OpRow& row : op_table()) {
    const auto it = r.op_counts.find(row.name);
    const int n = it == r.op_counts.end() ? 0 : it->second;
    BOOST_TEST(n >= 20, row.name << " was drawn " << n << " times in 500 graphs");
  }
  // Nothing else is drawn: every name the fuzzer records is a row of the table.
  BOOST_TEST(r.op_counts.size() == op_table().size());
}

BOOST_AUTO_TEST_CASE(graphs_have_10_to_30_ops_reuse_and_broadcasting) {
  int with_reuse = 0, with_broadcast = 0;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    const FuzzGraph g = random_graph(seed);
    BOOST_TEST(g.op_count() >= 10, "seed " << seed << ":\n" << g.describe());
    BOOST_TEST(g.op_count() <= 30, "seed " << seed << ":\n" << g.describe());
    BOOST_TEST(graph_is_valid(g), "seed " << seed << ":\n" << g.describe());
    const arma::mat& out = g.steps.back().value;
    BOOST_TEST((out.n_rows == 1 && out.n_cols == 1));
    with_reuse += reused_values(g) > 0 ? 1 : 0;
    with_broadcast += has_broadcast(g) ? 1 : 0;
  }
  BOOST_TEST(with_reuse >= 180, with_reuse << " of 200 graphs reuse a value");
  BOOST_TEST(with_broadcast >= 150, with_broadcast << " of 200 graphs broadcast");
}

BOOST_AUTO_TEST_CASE(a_seed_gives_the_same_graph_every_time) {
  BOOST_TEST(random_graph(42).describe() == random_graph(42).describe());
  BOOST_TEST(random_graph(42).describe() != random_graph(43).describe());
  const std::string text = random_graph(42).describe();
  BOOST_TEST(text.find("graph from seed 42") != std::string::npos, text);
  BOOST_TEST(text.find("v0   = leaf") != std::string::npos, text);
  BOOST_TEST(text.find("output: v") != std::string::npos, text);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(shrinking)

BOOST_AUTO_TEST_CASE(a_planted_wrong_backward_shrinks_to_one_op) {
  FuzzOptions options;
  options.custom_ops = {{"bad_square", bad_square}};
  const FuzzReport r = fuzz(50, 1000, options);
  BOOST_TEST_REQUIRE(r.failures.size() == 1u);
  const FuzzFailure& f = r.failures[0];
  BOOST_TEST(f.graph.op_count() >= 10);
  // The smallest graph: one leaf and bad_square of it, and it still fails.
  BOOST_TEST(f.shrunk.op_count() == 1, f.describe());
  BOOST_TEST(f.shrunk.steps.back().op == "bad_square", f.describe());
  BOOST_TEST(!f.shrunk_check.passed);
  BOOST_TEST(!check_graph(f.shrunk).passed);
  const std::string text = f.describe();
  BOOST_TEST(text.find("seed " + std::to_string(f.seed)) != std::string::npos, text);
  BOOST_TEST(text.find("bad_square(v0)") != std::string::npos, text);
  BOOST_TEST(text.find("FAIL") != std::string::npos, text);
}

BOOST_AUTO_TEST_CASE(without_the_planted_op_the_same_seeds_pass) {
  const FuzzReport r = fuzz(20, 1000);
  BOOST_TEST(r.failures.empty(), (r.failures.empty() ? "" : r.failures[0].describe()));
}

BOOST_AUTO_TEST_CASE(a_backward_of_the_wrong_shape_is_reported_with_the_node) {
  FuzzOptions options;
  options.custom_ops = {{"bad_shape", bad_shape}};
  const FuzzReport r = fuzz(50, 2000, options);
  BOOST_TEST_REQUIRE(r.failures.size() == 1u);
  const FuzzFailure& f = r.failures[0];
  BOOST_TEST(f.shrunk.op_count() == 1, f.describe());
  BOOST_TEST(f.shrunk_check.message.find("backward of 'bad_shape'") != std::string::npos, f.describe());
}

BOOST_AUTO_TEST_CASE(the_shrinker_keeps_graphs_inside_the_domain) {
  // Bypassing square + 0.5 would hand log a negative input: never kept.
  FuzzGraph g;
  g.steps = {{"leaf", {}, {}, arma::mat{{-1.5, 0.7}}},
             {"square", {0}, {}, {}},
             {"add_scalar", {1}, {0.5}, {}},
             {"log", {2}, {}, {}}};
  FuzzGraph copy = g;
  BOOST_TEST(graph_is_valid(g));
  g.steps[3].args = {0};
  BOOST_TEST(!graph_is_valid(g));
  const FuzzGraph shrunk = shrink(copy, [](const FuzzGraph& h) { return h.steps.back().op == "log"; });
  BOOST_TEST(shrunk.op_count() == 1);  // log of a leaf holding square + 0.5's value
  BOOST_TEST(shrunk.steps[0].value.min() >= 0.5);
}

BOOST_AUTO_TEST_SUITE_END()
