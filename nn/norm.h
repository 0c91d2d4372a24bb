// The norm vocabulary in one place: the kinds of norm a model can use, the two
// implementations of each, their names, parsing and construction; and the
// modules themselves. LayerNorm and RMSNorm each run either implementation of
// ops/layernorm.h, so a model can swap composed for fused and nothing else changes.
// BatchNorm, the one whose output depends on the batch, has running statistics
// and a different forward in eval mode.
//
// The names ("layernorm", "fused") are the ones checkpoints store; the command
// line parses its options with parse_norm and parse_impl (cli/run_options.cpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "nn/module.h"

namespace ag {

// The norm after each hidden Linear of an MLP, or in each transformer block
// (LayerNorm or RMSNorm only: a GPT's rows are tokens, not a batch's samples).
enum class Norm { None, LayerNorm, RMSNorm, BatchNorm };

enum class Impl {
  Composed,  // built from primitive ops; the tape derives the backward
  Fused      // one tape node with a handwritten backward
};

// Every kind, in the order the names are listed in messages.
const std::vector<Norm>& norm_kinds();  // None, LayerNorm, RMSNorm, BatchNorm
const std::vector<Impl>& impl_kinds();  // Composed, Fused

const char* norm_name(Norm n);     // "none", "layernorm", "rmsnorm", "batchnorm"
const char* impl_name(Impl impl);  // "composed", "fused"
// The kind of a name above; throws Error naming the choices for anything else.
Norm parse_norm(const std::string& name);
Impl parse_impl(const std::string& name);

// A LayerNorm, RMSNorm or BatchNorm module named `name` over `width` features (nullptr for
// Norm::None). BatchNorm has one implementation, composed: `impl` must say so.
std::unique_ptr<Module> make_norm(const std::string& name, Norm norm, arma::uword width, Impl impl);

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

// Per column (each feature over the batch), PyTorch's BatchNorm1d:
//   training: y = (x - mean) / sqrt(var + eps) * gamma + beta with the batch's
//             mean and BIASED variance (batchnorm_composed), and then
//             running = (1 - momentum) * running + momentum * batch statistic,
//             the running variance fed the UNBIASED batch variance (divide by N - 1);
//   eval:     the same formula with running_mean and running_var as constants,
//             so a sample's output no longer depends on its batch mates.
// running_mean starts at 0, running_var at 1. They are statistics, not
// parameters: no gradient, not in parameters(). A batch of one row in training
// mode throws (its variance is 0, and N - 1 = 0); in eval mode it is fine.
class BatchNorm : public Module {
 public:
  BatchNorm(const std::string& name, arma::uword features, double momentum = 0.1, double eps = 1e-5);
  Var forward(Var x) override;
  std::vector<Parameter*> parameters() override { return {&gamma, &beta}; }
  std::vector<Statistic> statistics() override { return {{name_ + ".running_mean", &running_mean}, {name_ + ".running_var", &running_var}}; }
  std::string describe() const override;  // "BatchNorm(3, training)" / "BatchNorm(3, eval)"

  Parameter gamma;  // 1 x features
  Parameter beta;   // 1 x features
  arma::mat running_mean;  // 1 x features
  arma::mat running_var;   // 1 x features

 private:
  Var forward_training(Var x);
  Var forward_eval(Var x);

  std::string name_;
  double momentum_;
  double eps_;
};

}  // namespace ag
