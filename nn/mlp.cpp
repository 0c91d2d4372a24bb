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
    net.add(std::make_unique<Linear>("fc" + k, spec.sizes[i], out, rng, spec.init, spec.init_scale));
    if (i + 1 == n_linear) break;  // the output layer: no norm, no activation
    const bool norm = spec.norm != Norm::None;
    if (norm && !spec.norm_after_activation) net.add(make_norm("norm" + k, spec.norm, out, spec.impl));
    net.add(make_activation(spec.activation));
    if (norm && spec.norm_after_activation) net.add(make_norm("norm" + k, spec.norm, out, spec.impl));
  }
  return net;
}

const char* activation_name(Activation a) {
  return a == Activation::Tanh ? "tanh" : a == Activation::GELU ? "gelu" : "relu";
}

Activation parse_activation(const std::string& s) {
  if (s == "relu") return Activation::ReLU;
  if (s == "tanh") return Activation::Tanh;
  if (s == "gelu") return Activation::GELU;
  throw Error("unknown activation '" + s + "' (expected relu, tanh or gelu)");
}

}  // namespace ag
