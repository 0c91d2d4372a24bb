#define BOOST_TEST_MODULE ops
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "check/op_table.h"
#include "ops/ops.h"

using namespace ag;
namespace bdata = boost::unit_test::data;

namespace {
std::vector<std::string> op_names() {
  std::vector<std::string> names;
  for (const OpCase& op : op_table()) names.push_back(op.name);
  return names;
}
const OpCase& find_op(const std::string& name) {
  for (const OpCase& op : op_table()) if (op.name == name) return op;
  throw std::runtime_error("no op " + name);
}
}  // namespace

// The op table: every op's backward against finite differences, on three seeds.
BOOST_DATA_TEST_CASE(every_op_passes_gradcheck, bdata::make(op_names()) * bdata::make(std::vector<int>{0, 1, 2}), name, seed) {
  const OpCase& op = find_op(name);
  std::mt19937_64 rng(1000 + seed);
  GradcheckOptions options;
  options.seed = static_cast<unsigned>(seed);
  const GradcheckReport r = gradcheck(op.f, make_inputs(op, rng), options);
  BOOST_TEST(r.passed, name << ":\n" << r.summary());
  const DotProductReport d = dot_product_test(op.f, make_inputs(op, rng), options);
  BOOST_TEST(d.passed, name << ": <Jv,u> = " << d.jv_dot_u << " but <v,J^T u> = " << d.v_dot_jtu);
}

BOOST_AUTO_TEST_CASE(op_table_covers_every_primitive) {
  const std::vector<std::string> required = {
      "add", "sub", "mul", "div", "neg", "add_scalar", "mul_scalar", "pow_scalar", "exp", "log",
      "sqrt", "square", "tanh", "sigmoid", "relu", "matmul", "transpose", "sum", "sum(dim=0)",
      "sum(dim=1)", "mean", "mean(dim=0)", "mean(dim=1)", "var(dim=0)", "var(dim=1)",
      "var(dim=1, unbiased)", "max(dim=0)", "max(dim=1)", "logsumexp(dim=0)", "logsumexp(dim=1)",
      "add (row broadcast)", "add (column broadcast)", "add (scalar broadcast)"};
  const std::vector<std::string> names = op_names();
  for (const std::string& r : required) {
    BOOST_TEST((std::find(names.begin(), names.end(), r) != names.end()), "op table lacks " << r);
  }
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
