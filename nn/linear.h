// Linear layer: y = x W + b, one sample per row.
//
// W is stored in_features x out_features (PyTorch stores its transpose), so
// the forward is a plain x W with no transpose on the tape.
#pragma once

#include <string>

#include "nn/module.h"
#include "autograd/rng.h"

namespace ag {

enum class Init {
  Kaiming,  // uniform in +-sqrt(6 / in): keeps the variance through ReLU layers (He et al. 2015)
  Xavier    // uniform in +-sqrt(6 / (in + out)): for tanh/sigmoid layers (Glorot & Bengio 2010)
};

class Linear : public Module {
 public:
  // weight: drawn from rng by `init`; bias: zeros. Parameters "<name>.weight", "<name>.bias".
  // `scale` multiplies the drawn weights (the "initialisation scale" of a lesson's experiment).
  Linear(const std::string& name, arma::uword in_features, arma::uword out_features, Rng& rng,
         Init init = Init::Kaiming, double scale = 1.0);

  Var forward(Var x) override;
  std::vector<Parameter*> parameters() override { return {&weight, &bias}; }
  std::string describe() const override;

  Parameter weight;  // in x out
  Parameter bias;    // 1 x out

 private:
  std::string name_;
};

}  // namespace ag
