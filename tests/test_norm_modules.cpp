// The BatchNorm module: running statistics against hand values, the eval-mode
// formula, gradients in both modes, and the train/eval difference.
#define BOOST_TEST_MODULE norm_modules
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <memory>
#include <string>

#include "autograd/gradcheck.h"
#include "nn/activations.h"
#include "nn/norm.h"
#include "ops/ops.h"

using ag::Var;

namespace {

// Two batches whose column statistics are easy by hand.
// A: means (4, 14, 1); squared deviations sum to (20, 56, 18), so the unbiased
//    variances are (20/3, 56/3, 6) and the biased ones (5, 14, 4.5).
// B: means (5, 3, 2); squared deviations (26, 18, 6): unbiased (13, 9, 3).
const arma::mat kBatchA = {{1, 10, -1}, {3, 20, -1}, {5, 12, 2}, {7, 14, 4}};
const arma::mat kBatchB = {{2, 0, 1}, {4, 6, 1}, {9, 3, 4}};

void train_on(ag::BatchNorm& bn, const arma::mat& batch) {
  ag::Tape tape;
  bn(tape.constant(batch));
}

// A BatchNorm after batches A and B, with gamma and beta away from 1 and 0.
std::unique_ptr<ag::BatchNorm> trained_batchnorm() {
  auto bn = std::make_unique<ag::BatchNorm>("bn", 3);
  train_on(*bn, kBatchA);
  train_on(*bn, kBatchB);
  bn->gamma.mutable_value() = {{1.5, -0.5, 2.0}};
  bn->beta.mutable_value() = {{0.25, 1.0, -3.0}};
  return bn;
}

// gradcheck's test, |analytic - numeric| <= atol + rtol |numeric| (PyTorch's defaults),
// for x through ag::gradcheck, and for gamma and beta (which the module reads as
// Parameters, not as gradcheck's leaves) against the library's central differences.
void check_gradients(ag::BatchNorm& bn, const arma::mat& x) {
  const arma::mat mean0 = bn.running_mean, var0 = bn.running_var;
  const ag::GradcheckReport rx =
      ag::gradcheck([&bn](ag::Tape&, const std::vector<Var>& in) { return bn(in[0]); }, {x});
  BOOST_TEST(rx.passed, rx.summary());

  const arma::mat w = arma::regspace(1, x.n_elem) / double(x.n_elem) - 0.3;  // fixed output weights
  const arma::mat weights = arma::reshape(w, x.n_rows, x.n_cols);
  bn.zero_grad();
  ag::Tape tape;
  tape.backward(bn(tape.constant(x)), weights);
  const arma::mat g0 = bn.gamma.value(), b0 = bn.beta.value();
  const ag::ScalarFunction f = [&](const std::vector<arma::mat>& in) {
    bn.gamma.mutable_value() = in[0];
    bn.beta.mutable_value() = in[1];
    ag::Tape t;
    return arma::accu(bn(t.constant(x)).value() % weights);
  };
  const arma::mat dgamma = ag::numeric_gradient(f, {g0, b0}, 0);
  const arma::mat dbeta = ag::numeric_gradient(f, {g0, b0}, 1);
  bn.gamma.mutable_value() = g0;
  bn.beta.mutable_value() = b0;
  bn.running_mean = mean0;  // training-mode forwards above moved them; put them back
  bn.running_var = var0;
  BOOST_TEST(arma::all(arma::vectorise(arma::abs(bn.gamma.grad() - dgamma) <= 1e-5 + 1e-3 * arma::abs(dgamma))));
  BOOST_TEST(arma::all(arma::vectorise(arma::abs(bn.beta.grad() - dbeta) <= 1e-5 + 1e-3 * arma::abs(dbeta))));
  BOOST_TEST(arma::abs(bn.gamma.grad()).max() > 0.1);  // a zero gradient would pass trivially
}

}  // namespace

BOOST_AUTO_TEST_CASE(running_statistics_after_two_batches_match_hand_values) {
  ag::BatchNorm bn("bn", 3);
  BOOST_TEST(arma::all(arma::vectorise(bn.running_mean) == 0.0));  // PyTorch's start: mean 0, var 1
  BOOST_TEST(arma::all(arma::vectorise(bn.running_var) == 1.0));
  train_on(bn, kBatchA);
  train_on(bn, kBatchB);
  // momentum 0.1: running = 0.9 (0.9 start + 0.1 A) + 0.1 B = 0.81 start + 0.09 A + 0.1 B
  // mean: 0.09 (4, 14, 1) + 0.1 (5, 3, 2)
  // var:  0.81 + 0.09 (20/3, 56/3, 6) + 0.1 (13, 9, 3), the UNBIASED batch variances
  //       (the biased ones would give 0.81 + 0.09 (5, 14, 4.5) + 0.1 (26, 18, 6) / 3 = (2.1267, 2.67, 1.415))
  BOOST_TEST(arma::approx_equal(bn.running_mean, arma::mat{{0.86, 1.56, 0.29}}, "absdiff", 1e-12));
  BOOST_TEST(arma::approx_equal(bn.running_var, arma::mat{{2.71, 3.39, 1.65}}, "absdiff", 1e-12));
}

BOOST_AUTO_TEST_CASE(training_mode_normalises_with_the_biased_batch_variance) {
  ag::BatchNorm bn("bn", 3);
  ag::Tape tape;
  const arma::mat y = bn(tape.constant(kBatchA)).value();
  // Column 0 of A: mean 4, biased variance 5.
  const arma::mat expected = (kBatchA.col(0) - 4.0) / std::sqrt(5.0 + 1e-5);
  BOOST_TEST(arma::approx_equal(arma::mat(y.col(0)), expected, "absdiff", 1e-14));
  BOOST_TEST(arma::approx_equal(y, ag::batchnorm_composed(tape.constant(kBatchA), tape.constant(arma::ones(1, 3)),
                                                          tape.constant(arma::zeros(1, 3))).value(),
                                "absdiff", 0.0));
}

BOOST_AUTO_TEST_CASE(eval_mode_uses_the_running_statistics_and_leaves_them_alone) {
  std::unique_ptr<ag::BatchNorm> bn = trained_batchnorm();
  bn->eval();
  const arma::mat mean = bn->running_mean, var = bn->running_var;
  const arma::mat x = {{1, 2, 3}, {-4, 0.5, 8}};
  ag::Tape tape;
  const arma::mat y = (*bn)(tape.constant(x)).value();
  arma::mat expected = x;
  for (arma::uword j = 0; j < 3; ++j) {
    expected.col(j) = (x.col(j) - mean(j)) / std::sqrt(var(j) + 1e-5) * bn->gamma.value()(j) + bn->beta.value()(j);
  }
  BOOST_TEST(arma::approx_equal(y, expected, "absdiff", 1e-12));
  BOOST_TEST(arma::approx_equal(bn->running_mean, mean, "absdiff", 0.0));  // eval does not update
  BOOST_TEST(arma::approx_equal(bn->running_var, var, "absdiff", 0.0));
  // A single sample is fine in eval mode, and gets the same output as inside the batch.
  const arma::mat one = (*bn)(tape.constant(arma::mat(x.row(0)))).value();
  BOOST_TEST(arma::approx_equal(one, arma::mat(y.row(0)), "absdiff", 0.0));
}

BOOST_AUTO_TEST_CASE(gradients_check_in_training_mode) {
  std::unique_ptr<ag::BatchNorm> bn = trained_batchnorm();
  bn->train();
  check_gradients(*bn, kBatchA / 3.0);
  // Centring: a column's dx sums to zero (1^T J = 0 for each column's Jacobian).
  ag::Tape tape;
  Var x = tape.leaf(kBatchA / 3.0);
  tape.backward((*bn)(x), arma::mat(arma::reshape(arma::regspace(1, 12), 4, 3)));
  BOOST_TEST(arma::abs(arma::sum(x.grad(), 0)).max() < 1e-12);
  BOOST_TEST(arma::abs(x.grad()).max() > 0.1);
}

BOOST_AUTO_TEST_CASE(gradients_check_in_eval_mode_through_constant_statistics) {
  std::unique_ptr<ag::BatchNorm> bn = trained_batchnorm();
  bn->eval();
  const arma::mat x = kBatchA / 3.0;
  check_gradients(*bn, x);
  // The running statistics are constants: the Jacobian is diagonal, dx = dy * gamma / sqrt(running_var + eps).
  ag::Tape tape;
  Var xv = tape.leaf(x);
  const arma::mat dy = arma::reshape(arma::regspace(1, 12), 4, 3);
  tape.backward((*bn)(xv), dy);
  arma::mat expected = dy;
  expected.each_row() %= bn->gamma.value() / arma::sqrt(bn->running_var + 1e-5);
  BOOST_TEST(arma::approx_equal(xv.grad(), expected, "absdiff", 1e-12));
}

BOOST_AUTO_TEST_CASE(train_and_eval_outputs_differ_and_only_training_depends_on_the_batch) {
  std::unique_ptr<ag::BatchNorm> bn = trained_batchnorm();
  ag::Tape tape;
  Var x = tape.constant(kBatchA);
  const arma::mat in_training = (*bn)(x).value();
  bn->eval();
  const arma::mat in_eval = (*bn)(x).value();
  BOOST_TEST(arma::abs(in_training - in_eval).max() > 0.5);  // the mismatch a model trained in one mode meets
  // Eval: row 0's output is the same with other batch mates; training: it is not.
  const arma::mat others = arma::join_cols(kBatchA.row(0), kBatchB);
  BOOST_TEST(arma::approx_equal(arma::mat((*bn)(tape.constant(others)).value().row(0)), arma::mat(in_eval.row(0)),
                                "absdiff", 0.0));
  bn->train();
  BOOST_TEST(arma::abs((*bn)(tape.constant(others)).value().row(0) - in_training.row(0)).max() > 0.1);
}

BOOST_AUTO_TEST_CASE(a_batch_of_one_in_training_mode_is_an_error_naming_the_module) {
  ag::BatchNorm bn("encoder.bn1", 3);
  ag::Tape tape;
  const arma::mat mean = bn.running_mean, var = bn.running_var;
  try {
    bn(tape.constant(arma::mat{{1, 2, 3}}));
    BOOST_FAIL("no error for a batch of one");
  } catch (const ag::Error& e) {
    const std::string what = e.what();
    BOOST_TEST(what.find("BatchNorm 'encoder.bn1'") != std::string::npos, what);
    BOOST_TEST(what.find("at least 2") != std::string::npos, what);
    BOOST_TEST(what.find("1x3") != std::string::npos, what);
  }
  BOOST_TEST(arma::approx_equal(bn.running_mean, mean, "absdiff", 0.0));  // nothing was updated
  BOOST_TEST(arma::approx_equal(bn.running_var, var, "absdiff", 0.0));
  bn.eval();
  BOOST_TEST(bn(tape.constant(arma::mat{{1, 2, 3}})).value().n_elem == 3u);
  BOOST_CHECK_THROW(bn(tape.constant(arma::mat(2, 4, arma::fill::ones))), ag::Error);  // 4 features, not 3
  BOOST_CHECK_THROW(ag::BatchNorm("bn", 3, 1.5), ag::Error);                          // momentum > 1
  BOOST_CHECK_THROW(ag::BatchNorm("bn", 3, 0.1, 0.0), ag::Error);                     // eps = 0
}

BOOST_AUTO_TEST_CASE(parameters_names_modes_and_sequential_switching) {
  ag::Sequential net;
  net.add(std::make_unique<ag::BatchNorm>("bn", 3));
  net.add(std::make_unique<ag::ReLU>());
  BOOST_TEST(net.parameters().size() == 2u);  // running statistics are not parameters
  BOOST_TEST(net.parameters()[0]->name() == "bn.gamma");
  BOOST_TEST(net.parameters()[1]->name() == "bn.beta");
  BOOST_TEST(net.training());
  BOOST_TEST(net.describe() == "BatchNorm(3, training)\nReLU\n");
  net.eval();
  BOOST_TEST(!net.layer(0).training());
  BOOST_TEST(!net.layer(1).training());
  BOOST_TEST(net.describe() == "BatchNorm(3, eval)\nReLU\n");
  net.train();
  BOOST_TEST(net.layer(0).training());
}
