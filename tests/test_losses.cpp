// Losses against hand-computed values and finite differences, including inputs
// large enough to overflow a naive formula.
#define BOOST_TEST_MODULE losses
#include <boost/test/unit_test.hpp>

#include <cmath>

#include "autograd/gradcheck.h"
#include "ops/losses.h"
#include "ops/ops.h"

namespace tt = boost::test_tools;
using ag::Var;

BOOST_AUTO_TEST_CASE(mse_value_and_gradient) {
  ag::Tape tape;
  Var p = tape.leaf({{1, 2}, {3, 4}});
  Var loss = ag::mse(p, {{0, 2}, {5, 4}});
  BOOST_TEST(loss.value()(0) == 1.25);  // (1 + 0 + 4 + 0) / 4
  tape.backward(loss);
  BOOST_TEST(arma::approx_equal(p.grad(), arma::mat{{0.5, 0}, {-1, 0}}, "absdiff", 1e-15));  // 2 (p - t) / 4
  BOOST_CHECK_THROW(ag::mse(p, arma::mat(2, 3, arma::fill::zeros)), ag::Error);
}

BOOST_AUTO_TEST_CASE(softmax_cross_entropy_value_and_gradient) {
  ag::Tape tape;
  Var z = tape.leaf({{1, 2, 3}, {1, 1, 1}});
  Var loss = ag::softmax_cross_entropy(z, {2, 0});
  // Row 1: log(e + e^2 + e^3) - 3 = 0.40760596444438; row 2: log 3.
  BOOST_TEST(loss.value()(0) == (0.40760596444438013 + std::log(3.0)) / 2, tt::tolerance(1e-14));
  tape.backward(loss);
  // d loss / dz = (softmax(z) - onehot) / N.
  const double s1 = std::exp(1.0), s2 = std::exp(2.0), s3 = std::exp(3.0), total = s1 + s2 + s3;
  const arma::mat expected = {{s1 / total / 2, s2 / total / 2, (s3 / total - 1) / 2},
                              {(1.0 / 3 - 1) / 2, 1.0 / 6, 1.0 / 6}};
  BOOST_TEST(arma::approx_equal(z.grad(), expected, "absdiff", 1e-14));
}

BOOST_AUTO_TEST_CASE(softmax_cross_entropy_is_stable_for_huge_logits) {
  ag::Tape tape;
  Var z = tape.leaf({{1000, 0}, {-1000, 1000}});
  Var loss = ag::softmax_cross_entropy(z, {1, 1});
  BOOST_TEST(loss.value()(0) == 500.0, tt::tolerance(1e-14));  // (1000 + 0) / 2
  tape.backward(loss);
  BOOST_TEST(z.grad().is_finite());
  BOOST_TEST(z.grad()(0, 0) == 0.5, tt::tolerance(1e-14));
}

BOOST_AUTO_TEST_CASE(softmax_cross_entropy_rejects_bad_labels) {
  ag::Tape tape;
  Var z = tape.leaf(arma::mat(2, 3, arma::fill::zeros));
  BOOST_CHECK_THROW(ag::softmax_cross_entropy(z, {0, 3}), ag::Error);     // label out of range
  BOOST_CHECK_THROW(ag::softmax_cross_entropy(z, {0, 1, 2}), ag::Error);  // one label per row
}

BOOST_AUTO_TEST_CASE(bce_with_logits_values_including_extreme_logits) {
  ag::Tape tape;
  // z = 0, t = 1: log 2;  z = 2, t = 0: log(1 + e^2);  z = -3, t = 1: log(1 + e^3);  z = 800, t = 0: 800.
  Var z = tape.leaf({{0, 2, -3, 800}});
  Var loss = ag::bce_with_logits(z, {{1, 0, 1, 0}});
  const double expected = (std::log(2.0) + 2.1269280110429727 + 3.048587351573742 + 800) / 4;
  BOOST_TEST(loss.value()(0) == expected, tt::tolerance(1e-14));
  tape.backward(loss);
  // d/dz = (sigmoid(z) - t) / N, including the kink-free value at z = 0.
  const arma::mat g = {{(0.5 - 1) / 4, (1 / (1 + std::exp(-2.0))) / 4, (1 / (1 + std::exp(3.0)) - 1) / 4, 1.0 / 4}};
  BOOST_TEST(arma::approx_equal(z.grad(), g, "absdiff", 1e-15));
}

BOOST_AUTO_TEST_CASE(losses_pass_gradcheck) {
  const arma::mat z = {{0.3, -1.2, 2.0}, {-0.7, 0.4, 1.1}};
  const ag::GradcheckReport ce = ag::gradcheck(
      [](ag::Tape&, const std::vector<Var>& in) { return ag::softmax_cross_entropy(in[0], {2, 0}); }, {z});
  BOOST_TEST(ce.passed, ce.summary());
  const arma::mat t = {{1, 0, 0.3}, {0, 1, 1}};
  const ag::GradcheckReport bce = ag::gradcheck(
      [t](ag::Tape&, const std::vector<Var>& in) { return ag::bce_with_logits(in[0], t); }, {z});
  BOOST_TEST(bce.passed, bce.summary());
  const ag::GradcheckReport mse = ag::gradcheck(
      [t](ag::Tape&, const std::vector<Var>& in) { return ag::mse(in[0], t); }, {z});
  BOOST_TEST(mse.passed, mse.summary());
}

BOOST_AUTO_TEST_CASE(accuracy_counts_rows_whose_largest_logit_is_the_label) {
  const arma::mat logits = {{0.1, 0.9}, {2, 1}, {0, 3}, {5, -5}};
  BOOST_TEST(ag::accuracy(logits, {1, 0, 0, 0}) == 0.75);
  BOOST_TEST(arma::approx_equal(ag::one_hot({1, 0}, 3), arma::mat{{0, 1, 0}, {1, 0, 0}}, "absdiff", 0.0));
}
