// Optimizers update parameters in place from their gradients (PyTorch's formulas).
//
//   SGD:   g = grad + wd p;  v = mu v + g;  p -= lr v
//   Adam:  g = grad + wd p;  m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;
//          p -= lr (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)
//   AdamW: p -= lr wd p first (decay decoupled from the gradient), then Adam with wd = 0.
#pragma once

#include <armadillo>

#include <vector>

#include "autograd/parameter.h"

namespace ag {

class Optimizer {
 public:
  Optimizer(std::vector<Parameter*> params, double lr);
  virtual ~Optimizer() = default;
  virtual void step() = 0;
  void zero_grad();
  double lr() const { return lr_; }
  void set_lr(double lr) { lr_ = lr; }  // what a schedule calls before each epoch

 protected:
  std::vector<Parameter*> params_;
  double lr_;
};

struct SgdOptions {
  double lr = 0.01;
  double momentum = 0.0;
  double weight_decay = 0.0;
};

class SGD : public Optimizer {
 public:
  SGD(std::vector<Parameter*> params, SgdOptions options);
  void step() override;

 private:
  SgdOptions options_;
  std::vector<arma::mat> velocity_;
};

struct AdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;  // Adam: added to the gradient; AdamW: applied to p directly
};

class Adam : public Optimizer {
 public:
  // decoupled = true is AdamW.
  Adam(std::vector<Parameter*> params, AdamOptions options, bool decoupled = false);
  void step() override;
  long long steps() const { return t_; }

 private:
  AdamOptions options_;
  bool decoupled_;
  long long t_ = 0;
  std::vector<arma::mat> m_, v_;
};

// AdamW (Loshchilov & Hutter 2019): PyTorch's default weight decay 0.01.
class AdamW : public Adam {
 public:
  AdamW(std::vector<Parameter*> params, AdamOptions options) : Adam(std::move(params), options, true) {}
};

// Scales every gradient by max_norm / (norm + 1e-6) when their joint L2 norm
// exceeds max_norm (as torch.nn.utils.clip_grad_norm_). Returns the norm before clipping.
double clip_grad_norm(const std::vector<Parameter*>& params, double max_norm);

}  // namespace ag
