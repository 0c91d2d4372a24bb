// Optimizers: one step (two where the state matters) against numbers worked by hand.
#define BOOST_TEST_MODULE optimizers
#include <boost/test/unit_test.hpp>

#include "autograd/tape.h"
#include "nn/optim.h"
#include "nn/schedule.h"

namespace tt = boost::test_tools;

namespace {
ag::Parameter make(const arma::mat& value, const arma::mat& grad) {
  ag::Parameter p("p", value);
  p.mutable_grad() = grad;
  return p;
}
}  // namespace

BOOST_AUTO_TEST_CASE(sgd_with_momentum_and_weight_decay) {
  ag::Parameter p = make({{1, -2}}, {{0.5, 0.5}});
  ag::SGD sgd({&p}, {0.1, 0.9, 0.1});
  // g = grad + 0.1 p = [0.6, 0.3];  v = g;  p -= 0.1 v
  sgd.step();
  BOOST_TEST(p.value()(0) == 0.94, tt::tolerance(1e-14));
  BOOST_TEST(p.value()(1) == -2.03, tt::tolerance(1e-14));
  // g = [0.5 + 0.094, 0.5 - 0.203];  v = 0.9 [0.6, 0.3] + g = [1.134, 0.567];  p -= 0.1 v
  sgd.step();
  BOOST_TEST(p.value()(0) == 0.8266, tt::tolerance(1e-14));
  BOOST_TEST(p.value()(1) == -2.0867, tt::tolerance(1e-14));
}

BOOST_AUTO_TEST_CASE(plain_sgd_is_p_minus_lr_grad) {
  ag::Parameter p = make({{1, -2}}, {{0.5, -1}});
  ag::SGD sgd({&p}, {0.1, 0.0, 0.0});
  sgd.step();
  BOOST_TEST(arma::approx_equal(p.value(), arma::mat{{0.95, -1.9}}, "absdiff", 1e-15));
}

BOOST_AUTO_TEST_CASE(adam_bias_correction_over_two_steps) {
  ag::Parameter p = make({{1, -2}}, {{0.5, -0.25}});
  ag::AdamOptions o;
  o.lr = 0.1;
  ag::Adam adam({&p}, o);
  // Step 1: m_hat = g, v_hat = g^2, so p -= 0.1 g / (|g| + 1e-8).
  adam.step();
  BOOST_TEST(p.value()(0) == 0.900000002, tt::tolerance(1e-14));
  BOOST_TEST(p.value()(1) == -1.900000004, tt::tolerance(1e-14));
  // Step 2 with g = [0.1, 0.1]: m = 0.09 g1 + 0.1 g2, m_hat = m / 0.19; v = 0.000999 g1^2 + 0.001 g2^2, v_hat = v / 0.001999.
  p.mutable_grad() = {{0.1, 0.1}};
  adam.step();
  BOOST_TEST(p.value()(0) == 0.8196959063846518, tt::tolerance(1e-13));
  BOOST_TEST(p.value()(1) == -1.8654394210242804, tt::tolerance(1e-13));
  BOOST_TEST(adam.steps() == 2);
}

BOOST_AUTO_TEST_CASE(adam_weight_decay_is_added_to_the_gradient) {
  ag::Parameter p = make({{1, -2}}, {{0.5, -0.25}});
  ag::AdamOptions o;
  o.lr = 0.1;
  o.weight_decay = 0.1;
  ag::Adam adam({&p}, o);
  adam.step();  // g = [0.6, -0.45]; p -= 0.1 g / (|g| + 1e-8)
  BOOST_TEST(p.value()(0) == 0.9000000016666666, tt::tolerance(1e-14));
  BOOST_TEST(p.value()(1) == -1.900000002222222, tt::tolerance(1e-14));
}

BOOST_AUTO_TEST_CASE(adamw_decays_the_weights_directly) {
  ag::Parameter p = make({{1, -2}}, {{0.5, -0.25}});
  ag::AdamOptions o;
  o.lr = 0.1;
  o.weight_decay = 0.1;
  ag::AdamW adamw({&p}, o);
  adamw.step();  // p *= 1 - 0.1 * 0.1 -> [0.99, -1.98]; then p -= 0.1 g / (|g| + 1e-8)
  BOOST_TEST(p.value()(0) == 0.890000002, tt::tolerance(1e-14));
  BOOST_TEST(p.value()(1) == -1.880000004, tt::tolerance(1e-14));
}

BOOST_AUTO_TEST_CASE(zero_grad_clears_every_gradient) {
  ag::Parameter p = make({{1, 2}}, {{3, 4}});
  ag::SGD sgd({&p}, {});
  sgd.zero_grad();
  BOOST_TEST(arma::accu(arma::abs(p.grad())) == 0.0);
}

BOOST_AUTO_TEST_CASE(clip_grad_norm_scales_to_the_limit_across_parameters) {
  ag::Parameter a = make({{0, 0}}, {{3, 0}}), b = make(arma::mat(1, 1, arma::fill::zeros), arma::mat(1, 1, arma::fill::value(4.0)));
  const double norm = ag::clip_grad_norm({&a, &b}, 1.0);
  BOOST_TEST(norm == 5.0);
  BOOST_TEST(a.grad()(0) == 3.0 / (5.0 + 1e-6), tt::tolerance(1e-15));
  BOOST_TEST(b.grad()(0) == 4.0 / (5.0 + 1e-6), tt::tolerance(1e-15));
  // Under the limit: untouched.
  ag::Parameter c = make(arma::mat(1, 1, arma::fill::zeros), arma::mat(1, 1, arma::fill::value(0.5)));
  BOOST_TEST(ag::clip_grad_norm({&c}, 1.0) == 0.5);
  BOOST_TEST(c.grad()(0) == 0.5);
}

BOOST_AUTO_TEST_CASE(learning_rate_schedules) {
  ag::Schedule s;
  s.lr = 0.1;
  BOOST_TEST(s.at(0) == 0.1);
  BOOST_TEST(s.at(99) == 0.1);
  s.kind = ag::Schedule::Kind::Step;
  s.step_size = 10;
  s.gamma = 0.1;
  BOOST_TEST(s.at(9) == 0.1);
  BOOST_TEST(s.at(10) == 0.01, tt::tolerance(1e-15));
  BOOST_TEST(s.at(25) == 0.001, tt::tolerance(1e-14));
  s.kind = ag::Schedule::Kind::Cosine;
  s.end = 10;
  BOOST_TEST(s.at(0) == 0.1);
  BOOST_TEST(s.at(2) == 0.09045084971874738, tt::tolerance(1e-14));  // 0.05 (1 + cos(0.2 pi))
  BOOST_TEST(s.at(5) == 0.05, tt::tolerance(1e-14));
  BOOST_TEST(std::abs(s.at(10)) < 1e-17);
  // The GPT's: a linear warm-up, then down to min_lr at t = end, and no further.
  s.warmup = 4;
  s.end = 14;
  s.min_lr = 0.01;
  BOOST_TEST(s.at(0) == 0.025, tt::tolerance(1e-15));
  BOOST_TEST(s.at(3) == 0.1, tt::tolerance(1e-15));
  BOOST_TEST(s.at(4) == 0.1);
  BOOST_TEST(s.at(9) == 0.055, tt::tolerance(1e-14));
  BOOST_TEST(s.at(14) == 0.01, tt::tolerance(1e-14));
  BOOST_TEST(s.at(20) == 0.01, tt::tolerance(1e-14));
  BOOST_CHECK_THROW(ag::parse_schedule("linear"), ag::Error);
}
