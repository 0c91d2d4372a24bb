// Forward mode and second order through every module, the tiny GPT included
// (w.r.t. its parameters), and LayerNorm composed against fused at second
// order, on the seeds' input and on random shapes.
#define BOOST_TEST_MODULE forward_modules
#include <boost/test/unit_test.hpp>

#include <functional>
#include <memory>
#include <string>

#include "autograd/forward.h"
#include "check/forward_check.h"
#include "check/norm_second_order.h"
#include "nn/activations.h"
#include "nn/attention.h"
#include "nn/gpt.h"
#include "nn/mlp.h"
#include "nn/norm.h"
#include "nn/transformer.h"
#include "ops/functional.h"
#include "ops/ops.h"

using namespace ag;

namespace {

TapeFunction of_module(Module& m) {
  return [&m](Tape&, const std::vector<Var>& x) { return m(x[0]); };
}

void check_module(Module& m, const arma::mat& x, const std::string& name) {
  GradcheckOptions options;
  for (unsigned seed = 0; seed < 2; ++seed) {
    options.seed = seed;
    const ForwardCheck r = check_forward(of_module(m), {x}, 2, options);
    BOOST_TEST(r.passed, name << ", seed " << seed << ":\n" << r.summary());
    BOOST_TEST(r.transpose.rel_error <= 1e-12, name << ": " << r.transpose.rel_error);
  }
}

// The gradient of a loss with respect to a module's parameters, at their current values.
std::vector<arma::mat> parameter_gradient(Module& m, const std::function<Var(Tape&)>& loss) {
  Tape tape;
  Var l = loss(tape);
  m.zero_grad();
  tape.backward(l);
  std::vector<arma::mat> g;
  for (Parameter* p : m.parameters()) g.push_back(p->grad());
  return g;
}

void move_parameters(Module& m, const std::vector<arma::mat>& v, double step) {
  const std::vector<Parameter*> params = m.parameters();
  for (std::size_t k = 0; k < params.size(); ++k) params[k]->mutable_value() += step * v[k];
}

// Along a random direction v of the parameters: <grad L, v> from a tangent pass
// against the same from backward (to 1e-12), and H v (reverse-over-forward)
// against the central difference of the gradient.
void check_parameters(Module& m, const std::function<Var(Tape&)>& loss, const std::string& name) {
  Rng rng(5);
  std::vector<arma::mat> v;
  for (Parameter* p : m.parameters()) v.push_back(rng.uniform(p->value().n_rows, p->value().n_cols, -1, 1));
  Tape tape;
  Var l = loss(tape);
  Var dl = push_tangents(l, parameter_seeds(tape, m.parameters(), v));
  m.zero_grad();
  tape.backward(l, true);
  std::vector<arma::mat> g;
  for (Parameter* p : m.parameters()) g.push_back(p->grad());
  const double reverse = arma::dot(flatten(g), flatten(v)), forward = dl.item();
  const double scale = arma::norm(flatten(g)) * arma::norm(flatten(v)) + std::abs(forward);
  BOOST_TEST(std::abs(forward - reverse) <= 1e-12 * scale, name << ": " << forward << " vs " << reverse);

  m.zero_grad();
  tape.backward(dl);
  std::vector<arma::mat> hv;
  for (Parameter* p : m.parameters()) hv.push_back(p->grad());
  const double eps = 1e-5;
  move_parameters(m, v, eps);
  const arma::vec plus = flatten(parameter_gradient(m, loss));
  move_parameters(m, v, -2 * eps);
  const arma::vec minus = flatten(parameter_gradient(m, loss));
  move_parameters(m, v, eps);
  const arma::vec numeric = (plus - minus) / (2 * eps), analytic = flatten(hv);
  const double err = arma::abs(analytic - numeric).max(), size = arma::abs(numeric).max();
  BOOST_TEST(size > 1e-6, name << ": H v vanishes");
  BOOST_TEST(err <= 1e-5 + 1e-4 * size, name << ": H v off by " << err << " (max |H v| " << size << ")");
}

}  // namespace

BOOST_AUTO_TEST_CASE(layers_and_norms_pass_at_second_order) {
  Rng rng(1);
  const arma::mat x = rng.normal(4, 6, 1.0);
  Linear linear("fc", 6, 3, rng);
  check_module(linear, x, "Linear");
  for (Impl impl : {Impl::Composed, Impl::Fused}) {
    const std::string which = impl == Impl::Fused ? " (fused)" : " (composed)";
    LayerNorm ln("ln", 6, impl);
    ln.gamma.mutable_value() = rng.uniform(1, 6, 0.5, 1.5);
    ln.beta.mutable_value() = rng.uniform(1, 6, -0.5, 0.5);
    check_module(ln, x, "LayerNorm" + which);
    RMSNorm rms("rms", 6, impl);
    check_module(rms, x, "RMSNorm" + which);
  }
  BatchNorm bn("bn", 6);
  check_module(bn, x, "BatchNorm (training)");
  Tanh tanh_layer;
  check_module(tanh_layer, x, "Tanh");
  GELU gelu_layer;
  check_module(gelu_layer, x, "GELU");
}

BOOST_AUTO_TEST_CASE(mlps_pass_at_second_order) {
  Rng rng(2);
  const arma::mat x = rng.normal(5, 4, 1.0);
  for (Norm norm : {Norm::None, Norm::LayerNorm, Norm::RMSNorm}) {
    for (Impl impl : {Impl::Composed, Impl::Fused}) {
      MlpSpec spec{{4, 8, 3}, norm, impl, Activation::GELU, Init::Kaiming};
      Sequential mlp = make_mlp(spec, rng);
      check_module(mlp, x, std::string("MLP, ") + norm_name(norm) + (impl == Impl::Fused ? " fused" : " composed"));
      const arma::uvec labels = {0, 2, 1, 1, 0};
      check_parameters(mlp, [&](Tape& t) { return softmax_cross_entropy(mlp(t.constant(x)), labels); }, "MLP params");
    }
  }
}

BOOST_AUTO_TEST_CASE(attention_and_blocks_pass_at_second_order) {
  Rng rng(3);
  const arma::mat x = rng.normal(4, 8, 1.0);
  for (Impl impl : {Impl::Composed, Impl::Fused}) {
    CausalSelfAttention attn("attn", 8, 2, impl, rng);
    check_module(attn, x, "CausalSelfAttention");
    FeedForward ffn("ffn", 8, rng, 0.0, 0, impl);
    check_module(ffn, x, "FeedForward");
    BlockSpec spec;
    spec.width = 8;
    spec.heads = 2;
    spec.impl = impl;
    TransformerBlock block("block", spec, rng);
    check_module(block, x, "TransformerBlock");
  }
}

BOOST_AUTO_TEST_CASE(the_tiny_gpt_passes_at_second_order_in_its_parameters) {
  for (Impl impl : {Impl::Composed, Impl::Fused}) {
    GptSpec spec;
    spec.vocab = 7;
    spec.context = 8;
    spec.layers = 2;
    spec.block.width = 8;
    spec.block.heads = 2;
    spec.block.impl = impl;
    Rng rng(4);
    Gpt gpt(spec, rng);
    const arma::uvec tokens = {0, 3, 5, 2, 6, 0, 1, 4};
    const arma::uvec targets = {3, 5, 2, 6, 0, 1, 4, 0};
    check_parameters(gpt, [&](Tape& t) { return softmax_cross_entropy(gpt.logits(t, tokens, {5, 3}), targets); },
                     impl == Impl::Fused ? "GPT (fused)" : "GPT (composed)");
  }
}

// The HVP of L = <dy, LayerNorm(x, gamma, beta)> through the fused node (its
// handwritten JVP) equals the composed one's to rounding, and both equal finite
// differences of the gradient; on seed 000's input and on random shapes.
BOOST_AUTO_TEST_CASE(fused_and_composed_layernorm_agree_at_second_order) {
  Rng rng(6);
  std::vector<NormInputs> cases;
  const arma::mat seed000 = {{1.133, -0.299, 0.503}, {-0.176, 0.911, 0.143}, {0.766, 0.781, -0.518},
                             {1.601, -0.669, 0.368}, {0.663, 0.779, 0.648}};
  cases.push_back({seed000, arma::ones(1, 3), arma::zeros(1, 3), rng.uniform(5, 3, -1, 1)});
  for (int k = 0; k < 6; ++k) {
    const arma::uword n = 1 + rng.below(6), d = 2 + rng.below(9);
    cases.push_back({rng.normal(n, d, 1.0), rng.uniform(1, d, 0.5, 1.5), rng.uniform(1, d, -1, 1),
                     rng.uniform(n, d, -1, 1), k % 2 ? 1e-5 : 0.1, k % 3 == 2});
  }
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const NormHvp h = compare_norm_hvp(cases[k], 10 + k);
    const std::string what = (cases[k].rms ? "RMSNorm " : "LayerNorm ") + shape_str(cases[k].x);
    BOOST_TEST(h.composed_fused_rel <= 1e-10, what << ": composed vs fused " << h.composed_fused_rel);
    BOOST_TEST(h.composed_numeric_rel <= 1e-6, what << ": composed vs numeric " << h.composed_numeric_rel);
    BOOST_TEST(h.transpose_rel <= 1e-12, what << ": transpose " << h.transpose_rel);
    BOOST_TEST(arma::abs(h.fused).max() > 1e-3, what << ": H v vanishes");
  }
}

// The check names the pair that fails, with its numbers, not always the first.
BOOST_AUTO_TEST_CASE(a_second_order_disagreement_names_its_pair) {
  NormHvp h;
  BOOST_TEST(h.disagreement().empty());
  h.composed_numeric_rel = 2e-3;
  BOOST_TEST(h.disagreement() == "composed vs numeric (max rel 0.002, allowed 1e-05)", h.disagreement());
  h.composed_numeric_rel = 0;
  h.transpose_rel = arma::datum::nan;
  BOOST_TEST(h.disagreement().rfind("the fused transpose identity (max rel nan", 0) == 0, h.disagreement());
}
