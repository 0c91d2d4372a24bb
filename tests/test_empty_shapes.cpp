// Empty batches through every op: each op-table row and each composed
// function with 0 rows, 0 columns or both, forward and backward. An op either
// refuses with an ag::Error that names it (a mean of nothing has no value), or
// returns a result of the right shape whose backward gives each input a
// gradient of the input's shape. Nothing else may escape: no Armadillo
// std::logic_error, no crash.
#define BOOST_TEST_MODULE empty_shapes
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <set>

#include "check/node_check.h"
#include "check/op_table.h"
#include "ops/ops.h"

using namespace ag;
namespace bdata = boost::unit_test::data;

namespace {

std::vector<std::string> every_name() {
  std::vector<std::string> names;
  for (const OpRow* row : all_rows()) names.push_back(row->name);
  return names;
}

// A size of a gradcheck case stands for one dimension (N, D, K): emptying it
// sets it to 0 wherever it occurs. A size of 1 is a broadcast and stays. `size`
// 0 empties every dimension at once.
arma::uword emptied(arma::uword n, arma::uword size) { return n > 1 && (size == 0 || n == size) ? 0 : n; }
Shape emptied(Shape s, arma::uword size) { return {emptied(s.rows, size), emptied(s.cols, size)}; }

// The sizes to empty, one at a time, then all of them (0).
std::vector<arma::uword> sizes_to_empty(const GradcheckCase& c) {
  std::set<arma::uword> sizes;
  for (const Shape& s : c.shapes) {
    for (arma::uword n : {s.rows, s.cols}) {
      if (n > 1) sizes.insert(n);
    }
  }
  std::vector<arma::uword> v(sizes.begin(), sizes.end());
  v.push_back(0);
  return v;
}

std::string shapes_text(const std::vector<arma::mat>& inputs) {
  std::string s;
  for (const arma::mat& m : inputs) s += (s.empty() ? "" : ", ") + shape_str(m);
  return s;
}

// The row applied to `inputs` (empty along some dimension), forward and backward;
// `expected` is the output shape of the full case with the same dimension emptied.
void check_empty(const OpRow& row, const std::vector<arma::mat>& inputs, Shape expected) {
  const std::string what = row.name + " on " + shapes_text(inputs);
  Tape tape;
  std::vector<Var> leaves;
  for (const arma::mat& m : inputs) leaves.push_back(tape.leaf(m));
  Var y;
  try {
    y = row.apply(leaves, default_constants(row));
  } catch (const Error& e) {
    BOOST_TEST(std::string(e.what()).find(row.name) != std::string::npos,
               what << ": the error does not name the op: " << e.what());
    return;
  } catch (const std::exception& e) {
    BOOST_ERROR(what << ": forward threw something other than ag::Error: " << e.what());
    return;
  }
  BOOST_TEST(shape_str(y.value()) == shape_str(expected.rows, expected.cols), what << ": the result");
  // Each node's backward on its own, with an empty dout where its output is
  // empty: the tape's walk may skip those, the per-node check calls them all.
  const NodeCheckReport nodes = check_nodes(tape);
  BOOST_TEST(!nodes.first_wrong.has_value(), what << ":\n" << nodes.summary());
  BOOST_TEST(nodes.skipped == 0u, what << ":\n" << nodes.summary());
  try {
    Rng rng(5);
    tape.backward(y, rng.uniform(y.rows(), y.cols(), -1.0, 1.0));
  } catch (const std::exception& e) {
    BOOST_ERROR(what << ": backward threw: " << e.what());
    return;
  }
  for (std::size_t k = 0; k < leaves.size(); ++k) {
    BOOST_TEST(shape_str(leaves[k].grad()) == shape_str(inputs[k]), what << ": the gradient of input " << k);
  }
}

}  // namespace

// Every case of every row, with each of its dimensions emptied in turn and all at once.
BOOST_DATA_TEST_CASE(every_row_takes_empty_inputs_or_says_why_not, bdata::make(every_name()), name) {
  const OpRow& row = row_named(name);
  Rng rng(4);
  for (const GradcheckCase& c : row.cases) {
    Tape tape;
    std::vector<Var> leaves;
    for (const arma::mat& m : make_inputs(row, c, rng)) leaves.push_back(tape.leaf(m));
    const arma::mat full = row.apply(leaves, default_constants(row)).value();
    for (arma::uword size : sizes_to_empty(c)) {
      std::vector<arma::mat> inputs;
      for (std::size_t k = 0; k < c.shapes.size(); ++k) {
        inputs.push_back(draw(row.inputs[k], emptied(c.shapes[k], size), rng));
      }
      // A concatenation's widths add, which the one-size-one-dimension rule cannot say: its row can.
      std::vector<Shape> shapes;
      for (const arma::mat& m : inputs) shapes.push_back({m.n_rows, m.n_cols});
      check_empty(row, inputs, row.result_shape ? row.result_shape(shapes) : emptied(Shape{full.n_rows, full.n_cols}, size));
    }
  }
}

BOOST_AUTO_TEST_SUITE(values)

// A sum of nothing is 0, and so is a product over an inner dimension of 0.
BOOST_AUTO_TEST_CASE(a_sum_of_nothing_is_zero) {
  Tape tape;
  Var none = tape.leaf(arma::mat(3, 0));
  BOOST_TEST(sum(none).value()(0) == 0.0);
  BOOST_TEST(arma::approx_equal(sum(none, 1).value(), arma::mat(3, 1, arma::fill::zeros), "absdiff", 0));
  BOOST_TEST(shape_str(sum(none, 0).value()) == "1x0");
  Var b = tape.leaf(arma::mat(0, 2));
  Var y = matmul(none, b);
  BOOST_TEST(arma::approx_equal(y.value(), arma::mat(3, 2, arma::fill::zeros), "absdiff", 0));
  tape.backward(sum(y));
  BOOST_TEST(shape_str(none.grad()) == "3x0");
  BOOST_TEST(shape_str(b.grad()) == "0x2");
}

// What the README promises a student who feeds an empty batch.
BOOST_AUTO_TEST_CASE(a_mean_of_nothing_names_the_op_and_the_shape) {
  Tape tape;
  Var none = tape.leaf(arma::mat(3, 0));
  try {
    (void)mean(none, 1);
    BOOST_ERROR("mean over 0 columns must throw");
  } catch (const Error& e) {
    BOOST_TEST(std::string(e.what()) == "mean(dim=1): cannot average over 0 columns (input 3x0)");
  }
  try {
    (void)var(tape.leaf(arma::mat(1, 4)), 0, true);
    BOOST_ERROR("the unbiased variance of one row must throw");
  } catch (const Error& e) {
    BOOST_TEST(std::string(e.what()).rfind("var_unbiased(dim=0): cannot take the unbiased variance over 1 row", 0) == 0u,
               e.what());
  }
  // No output element, nothing to average: an empty result, not an error.
  BOOST_TEST(shape_str(mean(tape.leaf(arma::mat(0, 0)), 1).value()) == "0x1");
}

BOOST_AUTO_TEST_SUITE_END()
