// LayerNorm and RMSNorm as modules; each runs either implementation of
// ops/layernorm.h, so a model can swap composed for fused and nothing else changes.
#pragma once

#include <string>

#include "nn/module.h"

namespace ag {

enum class Impl {
  Composed,  // built from primitive ops; the tape derives the backward
  Fused      // one tape node with a handwritten backward
};

// Per row: y = (x - mean) / sqrt(var + eps) * gamma + beta. gamma = 1, beta = 0 at the start.
class LayerNorm : public Module {
 public:
  LayerNorm(const std::string& name, arma::uword features, Impl impl, double eps = 1e-5);
  Var forward(Var x) override;
  std::vector<Parameter*> parameters() override { return {&gamma, &beta}; }
  std::string describe() const override;

  Parameter gamma;  // 1 x features
  Parameter beta;   // 1 x features

 private:
  Impl impl_;
  double eps_;
};

// Per row: y = x / sqrt(mean(x^2) + eps) * gamma. gamma = 1 at the start.
class RMSNorm : public Module {
 public:
  RMSNorm(const std::string& name, arma::uword features, Impl impl, double eps = 1e-5);
  Var forward(Var x) override;
  std::vector<Parameter*> parameters() override { return {&gamma}; }
  std::string describe() const override;

  Parameter gamma;  // 1 x features

 private:
  Impl impl_;
  double eps_;
};

const char* impl_name(Impl impl);  // "composed" / "fused"

}  // namespace ag
