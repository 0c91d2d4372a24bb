// A multilayer perceptron from a list of layer sizes.
//
// sizes {64, 128, 10} builds  fc1: Linear(64 -> 128), [norm1], act1, fc2: Linear(128 -> 10):
// every hidden Linear is followed by the optional norm and then the activation
// (the norm before the nonlinearity, as Ioffe and Szegedy place BatchNorm), or
// with norm_after_activation by the activation and then the norm; the last
// Linear gives the outputs (logits) as they are.
#pragma once

#include <string>
#include <vector>

#include "nn/linear.h"
#include "nn/module.h"
#include "nn/norm.h"

namespace ag {

enum class Activation { ReLU, Tanh, GELU };

struct MlpSpec {
  std::vector<arma::uword> sizes;  // input, hidden..., output (at least 2)
  Norm norm = Norm::None;
  Impl impl = Impl::Composed;
  Activation activation = Activation::ReLU;
  Init init = Init::Kaiming;
  double init_scale = 1.0;  // multiplies every Linear's drawn weights
  bool norm_after_activation = false;  // Linear, activation, norm; by default Linear, norm, activation
};

// Draws the Linear weights from rng in layer order. Norms draw nothing, so
// specs that differ only in norm or impl start from the same weights.
Sequential make_mlp(const MlpSpec& spec, Rng& rng);

// The activation's name ("relu", "tanh", "gelu"), and back (throwing Error on an unknown name).
// The norm's names are in nn/norm.h.
const char* activation_name(Activation a);
Activation parse_activation(const std::string& s);

}  // namespace ag
