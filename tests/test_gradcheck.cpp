#define BOOST_TEST_MODULE gradcheck
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>

#include "autograd/gradcheck.h"
#include "ops/ops.h"

using namespace ag;

namespace {
// A deliberately wrong multiply: its backward swaps the factors (da = dy * a).
Var bad_mul(Var a, Var b) {
  Tape& t = tape_of("bad_mul", a, b);
  return t.record("bad_mul", {a, b}, a.value() % b.value(), [](Tape& t, const Node& n) {
    t.accumulate(n.inputs[0], n.grad % t.value(n.inputs[0]));
    t.accumulate(n.inputs[1], n.grad % t.value(n.inputs[0]));
  }, Saved{{a, b}});
}
const arma::mat A = {{1.0, -2.0, 0.5}, {0.3, 1.5, -0.7}};
const arma::mat B = {{2.0, 0.25, -1.0}, {1.1, -0.4, 0.9}};
}  // namespace

BOOST_AUTO_TEST_CASE(a_correct_backward_passes) {
  const GradcheckReport r = gradcheck([](Tape&, const std::vector<Var>& x) { return mul(x[0], x[1]); }, {A, B});
  BOOST_TEST(r.passed);
  BOOST_REQUIRE(r.inputs.size() == 2u);
  BOOST_TEST(r.inputs[0].max_abs_error < 1e-8);
  BOOST_TEST(r.inputs[0].rows == 2u);
  BOOST_TEST(r.inputs[0].cols == 3u);
}

BOOST_AUTO_TEST_CASE(a_wrong_backward_fails_and_names_the_worst_element) {
  const GradcheckReport r =
      gradcheck([](Tape&, const std::vector<Var>& x) { return bad_mul(x[0], x[1]); }, {A, B}, {}, {"a", "b"});
  BOOST_TEST(!r.passed);
  BOOST_TEST(!r.inputs[0].passed);  // da is wrong
  BOOST_TEST(r.inputs[1].passed);   // db is right
  BOOST_TEST(r.inputs[0].name == "a");
  // The worst element's numbers are the report's own analytic and numeric gradients.
  const InputReport& in = r.inputs[0];
  BOOST_TEST(in.worst_analytic == in.analytic(in.worst_row, in.worst_col));
  BOOST_TEST(in.worst_numeric == in.numeric(in.worst_row, in.worst_col));
  BOOST_TEST(in.max_abs_error > 0.1);
  BOOST_TEST(r.summary().find("FAIL") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(dot_product_test_agrees_and_disagrees) {
  const DotProductReport good =
      dot_product_test([](Tape&, const std::vector<Var>& x) { return mul(x[0], x[1]); }, {A, B});
  BOOST_TEST(good.passed);
  BOOST_TEST(good.rel_error < 1e-8);
  const DotProductReport bad =
      dot_product_test([](Tape&, const std::vector<Var>& x) { return bad_mul(x[0], x[1]); }, {A, B});
  BOOST_TEST(!bad.passed);
}

BOOST_AUTO_TEST_CASE(numeric_gradient_matches_a_known_derivative) {
  // d/dx sum(x^3) = 3x^2: the finite differences themselves are right.
  const GradcheckReport r =
      gradcheck([](Tape&, const std::vector<Var>& x) { return sum(pow_scalar(x[0], 3.0)); }, {A.cols(0, 0) + 2.0});
  const arma::mat x = A.cols(0, 0) + 2.0;
  BOOST_TEST(arma::approx_equal(r.inputs[0].numeric, 3.0 * arma::square(x), "absdiff", 1e-6));
}

BOOST_AUTO_TEST_CASE(numeric_gradient_rows_is_numeric_gradient_a_block_at_a_time) {
  // A function of one row that takes many rows: each row's sum of sin(x_j) * j, added in
  // column order. Blocks of 1, 3 (7 is not a multiple), 7 and 64 (more than the row) give
  // numeric_gradient's numbers to the bit: the same perturbed rows, the same differences.
  const arma::rowvec x = {0.3, -1.2, 2.5, 0.7, -0.1, 1.9, 0.05};
  const auto row_loss = [](const arma::mat& rows) {
    arma::vec out(rows.n_rows, arma::fill::zeros);
    for (arma::uword j = 0; j < rows.n_cols; ++j) out += arma::sin(rows.col(j)) * double(j + 1);
    return out;
  };
  const arma::mat one_at_a_time = numeric_gradient(
      [&](const std::vector<arma::mat>& in) { return row_loss(in[0])(0); }, {arma::mat(x)}, 0);
  for (const arma::uword block : {1u, 3u, 7u, 64u}) {
    const arma::rowvec blocked = numeric_gradient_rows(row_loss, x, kDefaultEps, block);
    BOOST_TEST(std::equal(blocked.begin(), blocked.end(), one_at_a_time.begin()), "block " << block);
  }
  BOOST_TEST(arma::approx_equal(one_at_a_time, arma::mat(arma::cos(x) % arma::regspace<arma::rowvec>(1, 7)), "absdiff", 1e-8));
  BOOST_CHECK_THROW(numeric_gradient_rows(row_loss, x, kDefaultEps, 0), Error);
  BOOST_CHECK_THROW(numeric_gradient_rows([](const arma::mat&) { return arma::vec(1); }, x), Error);  // one value per row
}

BOOST_AUTO_TEST_CASE(directional_difference_is_the_derivative_along_a_direction) {
  // f(a, b) = a % b moves along (va, vb) at va % b + a % vb; the central difference of a
  // product is exact up to rounding (its second derivative along the line is constant).
  const arma::mat va = arma::ones(arma::size(A)), vb = 2.0 * arma::ones(arma::size(B));
  const MatrixFunction f = [](const std::vector<arma::mat>& x) { return arma::mat(x[0] % x[1]); };
  const arma::mat d = directional_difference(f, {A, B}, {va, vb}, 1e-6);
  BOOST_TEST(arma::approx_equal(d, arma::mat(va % B + A % vb), "absdiff", 1e-8));
  BOOST_CHECK_THROW(directional_difference(f, {A, B}, {va}, 1e-6), Error);  // one direction per input
}

BOOST_AUTO_TEST_CASE(within_tolerance_is_pytorchs_allclose_with_one_default) {
  BOOST_TEST(within_tolerance(1.0 + 0.9e-3, 1.0));      // inside atol + rtol |reference| = 1.01e-3
  BOOST_TEST(!within_tolerance(1.0 + 1.1e-3, 1.0));
  BOOST_TEST(within_tolerance(0.9e-5, 0.0));            // near zero only atol counts
  BOOST_TEST(!within_tolerance(std::nan(""), 1.0));     // NaN is never within
  BOOST_TEST(!within_tolerance(1.0, std::nan("")));
  const GradcheckOptions defaults;
  BOOST_TEST(defaults.atol == kDefaultAtol);
  BOOST_TEST(defaults.rtol == kDefaultRtol);
}
