// The per-node check (check/node_check.h): every node of a tape checked on
// its own against finite differences of its replayed forward. A built-in op
// replays from its op-table row with the constants kept on the node; a custom
// op through its Function; anything else is skipped, never passed.
#define BOOST_TEST_MODULE node_check
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "autograd/custom_op.h"
#include "check/node_check.h"
#include "check/op_table.h"
#include "ops/ops.h"

namespace bdata = boost::unit_test::data;

namespace {
std::vector<std::string> op_names() {
  std::vector<std::string> names;
  for (const ag::OpRow& row : ag::op_table()) names.push_back(row.name);
  return names;
}
}  // namespace

BOOST_AUTO_TEST_CASE(the_per_node_check_names_the_first_wrong_node) {
  const ag::Function wrong_sign{"wrong_exp", [](const ag::Inputs& x) { return arma::mat(arma::exp(x[0])); },
                                [](const ag::Inputs&, const arma::mat& y, const arma::mat& dy) {
                                  return ag::Grads{-y % dy};
                                }};
  ag::Tape tape;
  ag::Var x = tape.leaf(arma::mat{{0.5, -1.0}, {2.0, 0.25}});
  ag::Var w = tape.leaf(arma::mat{{1.0, 2.0}, {-1.0, 0.5}});
  ag::Var h = ag::matmul(x, w);                   // node 2
  ag::Var s = ag::mul_scalar(ag::tanh(h), 1.5);   // nodes 3, 4
  ag::Var e = ag::apply(wrong_sign, {s});         // node 5
  ag::Var loss = ag::sum(ag::pow_scalar(e, 2.0)); // nodes 6, 7
  const ag::NodeCheckReport r = ag::check_nodes(tape);
  BOOST_TEST_MESSAGE(r.summary());
  BOOST_TEST_REQUIRE(r.first_wrong.has_value());
  BOOST_TEST(*r.first_wrong == e.id);
  BOOST_TEST(r.skipped == 0u);
  BOOST_TEST(r.nodes.size() == 6u);
  BOOST_TEST(r.summary().find("first wrong node: 5 'wrong_exp'") != std::string::npos);
  for (const ag::NodeCheck& c : r.nodes) {
    if (c.id != e.id) BOOST_TEST((c.status == ag::NodeStatus::Passed), c.op << ": " << c.note);
  }
  (void)loss;
}

BOOST_AUTO_TEST_CASE(a_tape_of_correct_builtins_passes_and_unknown_ops_are_skipped) {
  ag::Tape tape;
  ag::Var x = tape.leaf(arma::mat{{0.5, -1.0, 2.0}, {1.5, 0.25, -0.75}});
  ag::Var b = tape.leaf(arma::mat{{0.1, 0.2, 0.3}});
  ag::Var y = ag::var(ag::div(ag::exp(x + b), ag::add_scalar(ag::square(x), 1.0)), 1);
  ag::Var z = tape.record("mystery", {y}, y.value(), [](ag::Tape& t, const ag::Node& n) {
    t.accumulate(n.inputs[0], n.grad);
  });
  const ag::NodeCheckReport r = ag::check_nodes(tape);
  BOOST_TEST(!r.first_wrong.has_value(), r.summary());
  BOOST_TEST(r.skipped == 1u);
  BOOST_TEST(r.nodes.back().note.find("no op-table row for 'mystery'") != std::string::npos, r.summary());
  (void)z;
}

BOOST_AUTO_TEST_CASE(fused_norms_and_scalar_ops_replay_with_their_attributes) {
  ag::Tape tape;
  ag::Var x = tape.leaf(arma::mat{{0.5, -1.0, 2.0, 0.0}, {1.5, 0.25, -0.75, 3.0}});
  ag::Var zeros = tape.leaf(arma::mat(2, 4, arma::fill::zeros));  // c * 0 cannot tell c: the attribute can
  ag::Var g = tape.leaf(arma::mat{{1.0, 0.5, -2.0, 1.5}});
  ag::Var b = tape.leaf(arma::mat{{0.1, 0.2, 0.3, 0.4}});
  ag::Var ln = ag::layernorm_fused(x, g, b, 0.25);  // a large eps: replaying with 1e-5 would fail
  ag::Var rms = ag::rmsnorm_fused(x, g, 0.5);
  ag::Var y = ag::add(ag::mul_scalar(zeros, 3.0), ag::pow_scalar(ag::add_scalar(ag::square(ln), 1.0), 1.5));
  ag::Var loss = ag::sum(ag::add(y, rms));
  const ag::NodeCheckReport r = ag::check_nodes(tape);
  BOOST_TEST(!r.first_wrong.has_value(), r.summary());
  BOOST_TEST(r.skipped == 0u, r.summary());
  BOOST_TEST(ag::attribute(tape.node(ln.id), "eps") == 0.25);
  BOOST_TEST(ag::op_label(tape.node(rms.id)) == "rmsnorm_fused eps=0.5");
  BOOST_CHECK_THROW(ag::attribute(tape.node(ln.id), "c"), ag::Error);
  (void)loss;
}

// Every row replays from the table: its node is checked, not skipped, and passes.
BOOST_DATA_TEST_CASE(every_op_table_row_replays_and_passes, bdata::make(op_names()), name) {
  const ag::OpRow& row = *ag::find_op(name);
  ag::Rng rng(7);
  for (const ag::GradcheckCase& c : row.cases) {
    ag::Tape tape;
    std::vector<ag::Var> leaves;
    for (const arma::mat& m : ag::make_inputs(row, c, rng)) leaves.push_back(tape.leaf(m));
    (void)row.apply(leaves, ag::default_constants(row));
    const ag::NodeCheckReport r = ag::check_nodes(tape);
    BOOST_TEST(r.nodes.size() == 1u, ag::case_name(row, c) << ":\n" << r.summary());
    BOOST_TEST(r.skipped == 0u, ag::case_name(row, c) << ":\n" << r.summary());
    BOOST_TEST(!r.first_wrong.has_value(), ag::case_name(row, c) << ":\n" << r.summary());
  }
}

// A node is replayed by its name: one recorded as "mul" with a backward that
// swaps the factors (da = dy * a) is checked against the real mul, and caught.
BOOST_AUTO_TEST_CASE(a_wrong_backward_under_a_builtin_name_is_caught_by_its_row) {
  ag::Tape tape;
  ag::Var a = tape.leaf(arma::mat{{0.5, -1.0, 2.0}});
  ag::Var b = tape.leaf(arma::mat{{1.5, 0.25, -0.75}});
  ag::Var y = tape.record("mul", {a, b}, a.value() % b.value(), [](ag::Tape& t, const ag::Node& n) {
    t.accumulate(n.inputs[0], n.grad % t.value(n.inputs[0]));
    t.accumulate(n.inputs[1], n.grad % t.value(n.inputs[0]));
  });
  const ag::NodeCheckReport r = ag::check_nodes(tape);
  BOOST_TEST_REQUIRE(r.first_wrong.has_value(), r.summary());
  BOOST_TEST(*r.first_wrong == y.id);
  BOOST_TEST(!r.nodes[0].inputs[0].correct());  // da is wrong
  BOOST_TEST(r.nodes[0].inputs[1].correct());   // db is right
}

BOOST_AUTO_TEST_CASE(a_node_whose_backward_was_released_is_skipped_not_passed) {
  ag::Tape tape;
  ag::Var x = tape.leaf(arma::mat{{0.5, -1.0}});
  tape.backward(ag::sum(ag::exp(x)));
  const ag::NodeCheckReport r = ag::check_nodes(tape);
  BOOST_TEST(r.skipped == 2u, r.summary());
  BOOST_TEST(r.nodes[0].note.find("retain_graph") != std::string::npos, r.summary());
}
