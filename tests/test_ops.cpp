// The op table (check/op_table.h) and the ops themselves: every row and every
// composed function against finite differences, every name a node records has
// a row, and the forward values and broadcasting rules the rows rely on.
#define BOOST_TEST_MODULE ops
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <set>

#include "check/op_table.h"
#include "ops/layernorm.h"
#include "ops/ops.h"

using namespace ag;
namespace bdata = boost::unit_test::data;

namespace {

std::vector<std::string> names(const std::vector<const OpRow*>& rows) {
  std::vector<std::string> v;
  for (const OpRow* row : rows) v.push_back(row->name);
  return v;
}

std::vector<std::string> op_names() {
  std::vector<std::string> v;
  for (const OpRow& row : op_table()) v.push_back(row.name);
  return v;
}

// Leaves holding `inputs`, then the row applied to them with its default constants.
Var record(Tape& tape, const OpRow& row, const std::vector<arma::mat>& inputs) {
  std::vector<Var> leaves;
  for (const arma::mat& m : inputs) leaves.push_back(tape.leaf(m));
  return row.apply(leaves, default_constants(row));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(op_table_rows)

// Every gradcheck case of every row, ops and composites, on three seeds.
BOOST_DATA_TEST_CASE(every_row_passes_gradcheck, bdata::make(names(all_rows())) * bdata::make(std::vector<int>{0, 1, 2}),
                     name, seed) {
  const OpRow& row = row_named(name);
  const std::vector<std::string> all = names(all_rows());
  const auto position = std::find(all.begin(), all.end(), name) - all.begin();
  Rng rng(derive_seed(1000 + seed, std::uint64_t(position)));  // each row its own stream
  GradcheckOptions options;
  options.seed = static_cast<unsigned>(seed);
  for (const GradcheckCase& c : row.cases) {
    const GradcheckReport r = gradcheck(tape_function(row), make_inputs(row, c, rng), options);
    BOOST_TEST(r.passed, case_name(row, c) << ":\n" << r.summary());
    const DotProductReport d = dot_product_test(tape_function(row), make_inputs(row, c, rng), options);
    BOOST_TEST(d.passed, case_name(row, c) << ": <Jv,u> = " << d.jv_dot_u << " but <v,J^T u> = " << d.v_dot_jtu);
  }
}

// A row's name is exactly the Node::op its op records, so the per-node check
// and the fuzzer find it; constants are kept as the attributes the row names.
BOOST_DATA_TEST_CASE(each_row_records_one_node_of_its_own_name, bdata::make(op_names()), name) {
  const OpRow& row = row_named(name);
  Rng rng(1);
  Tape tape;
  const GradcheckCase& c = row.cases.at(0);
  Var y = record(tape, row, make_inputs(row, c, rng));
  BOOST_TEST(tape.size() == row.inputs.size() + 1, name << " recorded " << tape.size() - row.inputs.size() << " nodes");
  BOOST_TEST(tape.node(y.id).op == name);
  for (const Constant& k : row.constants) BOOST_TEST(attribute(tape.node(y.id), k.name) == k.value);
  BOOST_TEST(find_op(name) == &row);
}

// Recording every row and every composite, with every case, produces only
// node names that have a row: an op added to ops/ without one fails here.
BOOST_AUTO_TEST_CASE(every_name_a_node_records_has_a_row) {
  Rng rng(2);
  std::set<std::string> seen;
  for (const OpRow* row : all_rows()) {
    for (const GradcheckCase& c : row->cases) {
      Tape tape;
      (void)record(tape, *row, make_inputs(*row, c, rng));
      for (std::size_t id = row->inputs.size(); id < tape.size(); ++id) {
        const Node& node = tape.node(id);
        if (node.inputs.empty() && !node.backward) continue;  // a constant the function made
        seen.insert(node.op);
        BOOST_TEST(find_op(node.op) != nullptr, case_name(*row, c) << " records '" << node.op << "', which has no row");
      }
    }
  }
  for (const OpRow& composite : composites()) {
    BOOST_TEST(!seen.count(composite.name), "a node is named after the composite " << composite.name);
    BOOST_TEST(find_op(composite.name) == nullptr);
  }
}

// The row's def is the one its op records: the table reads the op's name and
// formulas from ops/ and writes none of them.
BOOST_AUTO_TEST_CASE(each_row_reads_the_def_its_op_records) {
  Rng rng(5);
  for (const OpRow& row : op_table()) {
    Tape tape;
    const Var y = record(tape, row, make_inputs(row, row.cases.front(), rng));
    BOOST_TEST(tape.node(y.id).def == row.def, row.name << " records '" << tape.node(y.id).op << "'");
  }
}

// Names are unique; each case has a shape per input that the row's shape rule
// allows; what a domain draws, the same domain accepts.
BOOST_AUTO_TEST_CASE(rows_are_well_formed) {
  std::set<std::string> unique;
  Rng rng(3);
  for (const OpRow* row : all_rows()) {
    BOOST_TEST(unique.insert(row->name).second, "two rows are named " << row->name);
    BOOST_TEST(!row->cases.empty(), row->name << " has no gradcheck case");
    BOOST_REQUIRE_MESSAGE(row->def != nullptr, row->name << " has no OpDef");
    BOOST_TEST(row->name == row->def->name);
    BOOST_TEST(std::string(row->def->forward).size() > 0);
    BOOST_TEST(std::string(row->def->backward).size() > 0);
    BOOST_TEST(std::string(row->def->tangent).size() > 0);
    BOOST_TEST((row->def->arity < 0 || std::size_t(row->def->arity) == row->inputs.size()), row->name);
    for (const GradcheckCase& c : row->cases) {
      BOOST_TEST_REQUIRE(c.shapes.size() == row->inputs.size(), case_name(*row, c));
      const std::vector<arma::mat> inputs = make_inputs(*row, c, rng);
      for (std::size_t k = 0; k < inputs.size(); ++k) {
        BOOST_TEST(accepts(*row, k, inputs[k], default_constants(*row)), case_name(*row, c) << " input " << k);
      }
      Tape tape;
      BOOST_CHECK_NO_THROW(record(tape, *row, inputs));
    }
  }
}

BOOST_AUTO_TEST_CASE(domains_refuse_what_they_guard_against) {
  const OpRow& log_row = row_named("log");
  BOOST_TEST(!accepts(log_row, 0, arma::mat{{1.0, -0.5}}, {}));
  const OpRow& pow_row = row_named("pow_scalar");
  const arma::mat minus_one(1, 1, arma::fill::value(-1.0));
  BOOST_TEST(accepts(pow_row, 0, minus_one, {2.0}));    // a whole power of a negative number
  BOOST_TEST(!accepts(pow_row, 0, minus_one, {0.5}));   // a square root of one
  BOOST_TEST(!accepts(row_named("div"), 1, arma::mat(1, 1, arma::fill::value(0.1)), {}));
  BOOST_TEST(!accepts(row_named("relu"), 0, arma::mat(1, 1, arma::fill::value(0.001)), {}));
  BOOST_TEST(!accepts(row_named("exp"), 0, arma::mat(1, 1, arma::fill::value(5.0)), {}));
  BOOST_TEST(!accepts(row_named("max(dim=1)"), 0, arma::mat{{1.0, 1.001}}, {}));
  BOOST_TEST(accepts(row_named("max(dim=0)"), 0, arma::mat{{1.0, 1.001}}, {}));  // one value per column
  BOOST_TEST(!accepts(row_named("var_unbiased(dim=0)"), 0, arma::mat{{1.0, 2.0}}, {}));
  BOOST_TEST(!accepts(row_named("layernorm_fused"), 0, arma::mat{{1.0, 1.01, 1.0}}, {1e-5}));
  BOOST_TEST(!accepts(row_named("rmsnorm_fused"), 0, arma::mat{{0.01, -0.01}}, {1e-5}));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_CASE(a_number_divided_by_a_var) {
  Tape tape;
  Var x = tape.leaf({{2.0, -4.0}});
  Var y = 3.0 / x;
  BOOST_TEST(y.value()(0) == 1.5);
  BOOST_TEST(y.value()(1) == -0.75);
  tape.backward(sum(y));
  // d(c / x)/dx = -c / x^2
  BOOST_TEST(x.grad()(0) == -0.75, boost::test_tools::tolerance(1e-15));
  BOOST_TEST(x.grad()(1) == -3.0 / 16, boost::test_tools::tolerance(1e-15));
}

BOOST_AUTO_TEST_SUITE(broadcasting)

BOOST_AUTO_TEST_CASE(gradients_take_the_input_shape) {
  Tape tape;
  Var x = tape.leaf(arma::mat(3, 4, arma::fill::ones));
  Var row = tape.leaf(arma::mat(1, 4, arma::fill::value(2.0)));
  Var col = tape.leaf(arma::mat(3, 1, arma::fill::value(3.0)));
  Var s = tape.leaf(arma::mat(1, 1, arma::fill::value(4.0)));
  Var y = sum((x + row) * col + s);
  tape.backward(y);
  BOOST_TEST(row.grad().n_rows == 1u);
  BOOST_TEST(row.grad().n_cols == 4u);
  BOOST_TEST(col.grad().n_rows == 3u);
  BOOST_TEST(col.grad().n_cols == 1u);
  // d/drow_j = sum_i col_i = 9; d/dcol_i = sum_j (1 + 2) = 12; d/ds = 12 copies.
  BOOST_TEST(arma::approx_equal(row.grad(), arma::mat(1, 4, arma::fill::value(9.0)), "absdiff", 1e-12));
  BOOST_TEST(arma::approx_equal(col.grad(), arma::mat(3, 1, arma::fill::value(12.0)), "absdiff", 1e-12));
  BOOST_TEST(s.grad()(0) == 12.0);
}

BOOST_AUTO_TEST_CASE(row_and_column_broadcast_to_a_matrix) {
  Tape tape;
  Var row = tape.leaf({{1.0, 2.0, 3.0}});
  Var col = tape.leaf(arma::mat(arma::colvec{10.0, 20.0}));
  Var y = row + col;
  BOOST_TEST(y.rows() == 2u);
  BOOST_TEST(y.cols() == 3u);
  BOOST_TEST(y.value()(1, 2) == 23.0);
}

BOOST_AUTO_TEST_CASE(mismatched_shapes_name_the_op_and_shapes) {
  Tape tape;
  Var a = tape.leaf(arma::mat(2, 3, arma::fill::ones));
  Var b = tape.leaf(arma::mat(3, 2, arma::fill::ones));
  try {
    (void)add(a, b);
    BOOST_ERROR("add of 2x3 and 3x2 must throw");
  } catch (const Error& e) {
    const std::string msg = e.what();
    BOOST_TEST(msg.find("add") != std::string::npos);
    BOOST_TEST(msg.find("2x3") != std::string::npos);
    BOOST_TEST(msg.find("3x2") != std::string::npos);
  }
  try {
    (void)matmul(a, a);
    BOOST_ERROR("matmul of 2x3 by 2x3 must throw");
  } catch (const Error& e) {
    const std::string msg = e.what();
    BOOST_TEST(msg.find("matmul") != std::string::npos);
    BOOST_TEST(msg.find("2x3") != std::string::npos);
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(forward_values)

BOOST_AUTO_TEST_CASE(reductions_follow_pytorch_dims) {
  Tape tape;
  Var x = tape.leaf({{1.0, 2.0, 3.0}, {4.0, 6.0, 8.0}});
  BOOST_TEST(sum(x, 0).value()(0, 2) == 11.0);
  BOOST_TEST(sum(x, 1).value()(1, 0) == 18.0);
  BOOST_TEST(mean(x, -1).value()(1, 0) == 6.0);
  BOOST_TEST(var(x, -1).value()(1, 0) == 8.0 / 3.0, boost::test_tools::tolerance(1e-14));
  BOOST_TEST(var(x, -1, true).value()(1, 0) == 4.0, boost::test_tools::tolerance(1e-14));
  BOOST_TEST(max(x, 0).value()(0, 1) == 6.0);
  Var one_row = tape.leaf({{1.0, 2.0}});
  BOOST_CHECK_THROW(var(one_row, 0, true), Error);  // unbiased variance of a single sample
}

BOOST_AUTO_TEST_CASE(var_has_no_cancellation_at_a_large_offset) {
  Tape tape;
  Var x = tape.leaf({{1e8 + 1.0, 1e8 + 2.0, 1e8 + 3.0, 1e8 + 4.0}});
  BOOST_TEST(var(x, -1).value()(0) == 1.25, boost::test_tools::tolerance(1e-9));
}

BOOST_AUTO_TEST_CASE(logsumexp_does_not_overflow) {
  Tape tape;
  Var x = tape.leaf({{1000.0, 1000.0}, {-1000.0, -1000.0}});
  Var y = logsumexp(x, 1);
  BOOST_TEST(y.value()(0) == 1000.0 + std::log(2.0), boost::test_tools::tolerance(1e-12));
  BOOST_TEST(y.value()(1) == -1000.0 + std::log(2.0), boost::test_tools::tolerance(1e-12));
  tape.backward(y, arma::mat(2, 1, arma::fill::ones));
  BOOST_TEST(x.grad()(0, 0) == 0.5, boost::test_tools::tolerance(1e-12));
}

BOOST_AUTO_TEST_CASE(sigmoid_is_finite_at_extremes) {
  Tape tape;
  Var x = tape.leaf({{-800.0, 800.0}});
  Var y = sigmoid(x);
  BOOST_TEST(y.value()(0) == 0.0, boost::test_tools::tolerance(1e-300));
  BOOST_TEST(y.value()(1) == 1.0);
  BOOST_TEST(y.value().is_finite());
}

BOOST_AUTO_TEST_SUITE_END()
