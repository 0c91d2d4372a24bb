// Activation functions as modules (no parameters), and GELU as a function.
#pragma once

#include "nn/module.h"

namespace ag {

// GELU, tanh approximation (Hendrycks & Gimpel 2016; GPT-2, PyTorch approximate="tanh"):
//   y = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
// composed from primitive ops, so the tape derives its gradient.
Var gelu(Var x);

class ReLU : public Module {
 public:
  Var forward(Var x) override;
  std::string describe() const override { return "ReLU"; }
};

class Tanh : public Module {
 public:
  Var forward(Var x) override;
  std::string describe() const override { return "Tanh"; }
};

class GELU : public Module {
 public:
  Var forward(Var x) override { return gelu(x); }
  std::string describe() const override { return "GELU(tanh)"; }
};

}  // namespace ag
