// Activation functions as modules (no parameters); the functions are ops (ops/ops.h).
#pragma once

#include "nn/module.h"
#include "ops/gelu.h"

namespace ag {


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
