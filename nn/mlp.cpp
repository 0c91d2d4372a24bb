#include "nn/mlp.h"

#include "nn/activations.h"

namespace ag {

namespace {
std::unique_ptr<Module> make_activation(Activation a) {
  switch (a) {
    case Activation::Tanh: return std::make_unique<Tanh>();
    case Activation::GELU: return std::make_unique<GELU>();
    case Activation::ReLU: break;
  }
  return std::make_unique<ReLU>();
}
}  // namespace

Sequential make_mlp(const MlpSpec& spec, Rng& rng) {
  if (spec.sizes.size() < 2) throw Error("make_mlp: needs at least an input and an output size");
  Sequential net;
  const std::size_t n_linear = spec.sizes.size() - 1;
  for (std::size_t i = 0; i < n_linear; ++i) {
    const std::string k = std::to_string(i + 1);
    const arma::uword out = spec.sizes[i + 1];
    net.add(std::make_unique<Linear>("fc" + k, spec.sizes[i], out, rng, spec.init));
    if (i + 1 == n_linear) break;  // the output layer: no norm, no activation
    if (spec.norm == Norm::LayerNorm) net.add(std::make_unique<LayerNorm>("norm" + k, out, spec.impl));
    if (spec.norm == Norm::RMSNorm) net.add(std::make_unique<RMSNorm>("norm" + k, out, spec.impl));
    net.add(make_activation(spec.activation));
  }
  return net;
}

const char* norm_name(Norm n) {
  return n == Norm::LayerNorm ? "layernorm" : n == Norm::RMSNorm ? "rmsnorm" : "none";
}

const char* activation_name(Activation a) {
  return a == Activation::Tanh ? "tanh" : a == Activation::GELU ? "gelu" : "relu";
}

Norm parse_norm(const std::string& s) {
  if (s == "none") return Norm::None;
  if (s == "layernorm") return Norm::LayerNorm;
  if (s == "rmsnorm") return Norm::RMSNorm;
  throw Error("unknown norm '" + s + "' (expected none, layernorm or rmsnorm)");
}

Impl parse_impl(const std::string& s) {
  if (s == "composed") return Impl::Composed;
  if (s == "fused") return Impl::Fused;
  throw Error("unknown implementation '" + s + "' (expected composed or fused)");
}

Activation parse_activation(const std::string& s) {
  if (s == "relu") return Activation::ReLU;
  if (s == "tanh") return Activation::Tanh;
  if (s == "gelu") return Activation::GELU;
  throw Error("unknown activation '" + s + "' (expected relu, tanh or gelu)");
}

}  // namespace ag
