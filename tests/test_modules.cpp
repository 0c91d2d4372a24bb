// Modules: parameter names and shapes, seeded initialisation, forwards against hand values.
#define BOOST_TEST_MODULE modules
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <set>

#include "autograd/gradcheck.h"
#include "nn/activations.h"
#include "nn/mlp.h"
#include "ops/ops.h"

namespace tt = boost::test_tools;
using ag::Var;

namespace {
ag::Sequential digits_mlp(ag::Norm norm, ag::Impl impl, std::uint64_t seed) {
  ag::Rng rng(seed);
  ag::MlpSpec spec;
  spec.sizes = {64, 128, 10};
  spec.norm = norm;
  spec.impl = impl;
  return ag::make_mlp(spec, rng);
}
}  // namespace

BOOST_AUTO_TEST_CASE(mlp_lists_named_parameters_in_layer_order) {
  ag::Sequential net = digits_mlp(ag::Norm::LayerNorm, ag::Impl::Composed, 1);
  const std::vector<ag::Parameter*> params = net.parameters();
  const std::vector<std::string> names = {"fc1.weight", "fc1.bias", "norm1.gamma", "norm1.beta", "fc2.weight", "fc2.bias"};
  const std::vector<std::pair<arma::uword, arma::uword>> shapes = {{64, 128}, {1, 128}, {1, 128}, {1, 128}, {128, 10}, {1, 10}};
  BOOST_TEST_REQUIRE(params.size() == names.size());
  for (std::size_t i = 0; i < params.size(); ++i) {
    BOOST_TEST(params[i]->name() == names[i]);
    BOOST_TEST(params[i]->value().n_rows == shapes[i].first);
    BOOST_TEST(params[i]->value().n_cols == shapes[i].second);
  }
  BOOST_TEST(net.parameter_count() == 64u * 128 + 128 + 128 + 128 + 128 * 10 + 10);
  BOOST_TEST(net.describe() == "Linear(64 -> 128)\nLayerNorm(128, composed)\nReLU\nLinear(128 -> 10)\n");
  BOOST_TEST(arma::all(arma::vectorise(params[2]->value()) == 1.0));  // gamma starts at 1
  BOOST_TEST(arma::all(arma::vectorise(params[3]->value()) == 0.0));  // beta at 0
  BOOST_TEST(arma::all(arma::vectorise(params[1]->value()) == 0.0));  // bias at 0
}

BOOST_AUTO_TEST_CASE(rmsnorm_and_plain_mlps_have_their_own_parameter_lists) {
  ag::Sequential rms = digits_mlp(ag::Norm::RMSNorm, ag::Impl::Fused, 1);
  BOOST_TEST(rms.parameters().size() == 5u);
  BOOST_TEST(rms.parameters()[2]->name() == "norm1.gamma");
  ag::Sequential plain = digits_mlp(ag::Norm::None, ag::Impl::Composed, 1);
  BOOST_TEST(plain.parameters().size() == 4u);
  BOOST_TEST(plain.describe() == "Linear(64 -> 128)\nReLU\nLinear(128 -> 10)\n");
}

BOOST_AUTO_TEST_CASE(initialisation_is_seeded_bounded_and_shared_across_norm_choices) {
  ag::Sequential a = digits_mlp(ag::Norm::None, ag::Impl::Composed, 7);
  ag::Sequential b = digits_mlp(ag::Norm::LayerNorm, ag::Impl::Fused, 7);
  ag::Sequential c = digits_mlp(ag::Norm::None, ag::Impl::Composed, 8);
  const arma::mat& w = a.parameters()[0]->value();
  // Same seed: the same weights, whatever the norm; another seed: different ones.
  BOOST_TEST(arma::approx_equal(w, b.parameters()[0]->value(), "absdiff", 0.0));
  BOOST_TEST(arma::approx_equal(a.parameters()[2]->value(), b.parameters()[4]->value(), "absdiff", 0.0));
  BOOST_TEST(!arma::approx_equal(w, c.parameters()[0]->value(), "absdiff", 0.0));
  // Kaiming uniform: |w| < sqrt(6 / fan_in), and the sample variance near bound^2 / 3 = 2 / fan_in.
  const double bound = std::sqrt(6.0 / 64.0);
  BOOST_TEST(arma::abs(w).max() < bound);
  BOOST_TEST(arma::abs(w).max() > 0.95 * bound);
  BOOST_TEST(arma::var(arma::vectorise(w)) == 2.0 / 64.0, tt::tolerance(0.05));
}

BOOST_AUTO_TEST_CASE(xavier_initialisation_uses_fan_in_plus_fan_out) {
  ag::Rng rng(3);
  ag::Linear layer("fc", 30, 10, rng, ag::Init::Xavier);
  const double bound = std::sqrt(6.0 / 40.0);
  BOOST_TEST(arma::abs(layer.weight.value()).max() < bound);
  BOOST_TEST(arma::abs(layer.weight.value()).max() > 0.9 * bound);
}

BOOST_AUTO_TEST_CASE(linear_forward_and_parameter_gradients) {
  ag::Rng rng(0);
  ag::Linear layer("fc", 2, 3, rng);
  layer.weight.mutable_value() = {{1, 2, 3}, {4, 5, 6}};
  layer.bias.mutable_value() = {{0.5, -0.5, 1}};
  ag::Tape tape;
  Var y = layer(tape.constant({{1, 1}, {2, 0}}));
  const arma::mat expected = {{5.5, 6.5, 10}, {2.5, 3.5, 7}};
  BOOST_TEST(arma::approx_equal(y.value(), expected, "absdiff", 1e-15));
  tape.backward(ag::sum(y));
  // dW = x^T 1 (column sums of x, repeated), db = number of rows.
  BOOST_TEST(arma::approx_equal(layer.weight.grad(), arma::mat{{3, 3, 3}, {1, 1, 1}}, "absdiff", 1e-15));
  BOOST_TEST(arma::approx_equal(layer.bias.grad(), arma::mat{{2, 2, 2}}, "absdiff", 1e-15));
  BOOST_CHECK_THROW(layer(tape.constant(arma::mat(2, 5, arma::fill::ones))), ag::Error);
}

BOOST_AUTO_TEST_CASE(gelu_matches_the_tanh_formula_and_its_gradient_checks) {
  ag::Tape tape;
  Var y = ag::gelu(tape.leaf({{1.0, -1.0, 2.0, 0.0}}));
  BOOST_TEST(y.value()(0) == 0.8411919906082768, tt::tolerance(1e-14));
  BOOST_TEST(y.value()(1) == -0.15880800939172324, tt::tolerance(1e-14));
  BOOST_TEST(y.value()(2) == 1.954597694087775, tt::tolerance(1e-14));
  BOOST_TEST(y.value()(3) == 0.0);
  const ag::GradcheckReport r = ag::gradcheck(
      [](ag::Tape&, const std::vector<Var>& in) { return ag::gelu(in[0]); }, {arma::mat{{-2.5, -0.3, 0.1, 1.7}, {3, -1, 0.5, 2}}});
  BOOST_TEST(r.passed, r.summary());
}

BOOST_AUTO_TEST_CASE(activation_modules_apply_their_function) {
  ag::Tape tape;
  Var x = tape.constant({{-1.0, 2.0}});
  BOOST_TEST(arma::approx_equal(ag::ReLU()(x).value(), arma::mat{{0, 2}}, "absdiff", 0.0));
  BOOST_TEST(ag::Tanh()(x).value()(1) == std::tanh(2.0), tt::tolerance(1e-15));
  BOOST_TEST(ag::GELU()(x).value()(1) == 1.954597694087775, tt::tolerance(1e-14));
}

BOOST_AUTO_TEST_CASE(norm_modules_composed_and_fused_agree) {
  for (ag::Norm norm : {ag::Norm::LayerNorm, ag::Norm::RMSNorm}) {
    ag::Sequential c = digits_mlp(norm, ag::Impl::Composed, 5), f = digits_mlp(norm, ag::Impl::Fused, 5);
    ag::Rng rng(9);
    const arma::mat x = rng.uniform(4, 64, 0.0, 1.0);
    ag::Tape tc, tf;
    Var yc = c(tc.constant(x)), yf = f(tf.constant(x));
    BOOST_TEST(arma::approx_equal(yc.value(), yf.value(), "absdiff", 1e-12));
    tc.backward(ag::sum(ag::square(yc)));
    tf.backward(ag::sum(ag::square(yf)));
    for (std::size_t i = 0; i < c.parameters().size(); ++i) {
      BOOST_TEST(arma::approx_equal(c.parameters()[i]->grad(), f.parameters()[i]->grad(), "absdiff", 1e-10),
                 c.parameters()[i]->name());
    }
  }
}

BOOST_AUTO_TEST_CASE(names_parse_and_unknown_names_throw) {
  BOOST_TEST(ag::norm_name(ag::parse_norm("rmsnorm")) == std::string("rmsnorm"));
  BOOST_TEST(ag::impl_name(ag::parse_impl("fused")) == std::string("fused"));
  BOOST_TEST(ag::activation_name(ag::parse_activation("gelu")) == std::string("gelu"));
  BOOST_TEST(ag::norm_name(ag::parse_norm("batchnorm")) == std::string("batchnorm"));
  BOOST_CHECK_THROW(ag::parse_norm("groupnorm"), ag::Error);
  BOOST_CHECK_THROW(ag::make_norm("n", ag::Norm::BatchNorm, 3, ag::Impl::Fused), ag::Error);  // one implementation, composed
  BOOST_CHECK_THROW(ag::parse_impl("fast"), ag::Error);
}
