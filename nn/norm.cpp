#include "nn/norm.h"

#include <cmath>
#include <sstream>

#include "ops/layernorm.h"
#include "ops/ops.h"

namespace ag {

const std::vector<Norm>& norm_kinds() {
  static const std::vector<Norm> kinds{Norm::None, Norm::LayerNorm, Norm::RMSNorm, Norm::BatchNorm};
  return kinds;
}

const std::vector<Impl>& impl_kinds() {
  static const std::vector<Impl> kinds{Impl::Composed, Impl::Fused};
  return kinds;
}

const char* norm_name(Norm n) {
  switch (n) {
    case Norm::LayerNorm: return "layernorm";
    case Norm::RMSNorm: return "rmsnorm";
    case Norm::BatchNorm: return "batchnorm";
    case Norm::None: break;
  }
  return "none";
}

const char* impl_name(Impl impl) { return impl == Impl::Composed ? "composed" : "fused"; }

Norm parse_norm(const std::string& name) {
  for (Norm n : norm_kinds()) {
    if (name == norm_name(n)) return n;
  }
  throw Error("unknown norm '" + name + "' (expected none, layernorm, rmsnorm or batchnorm)");
}

Impl parse_impl(const std::string& name) {
  for (Impl i : impl_kinds()) {
    if (name == impl_name(i)) return i;
  }
  throw Error("unknown implementation '" + name + "' (expected composed or fused)");
}

std::unique_ptr<Module> make_norm(const std::string& name, Norm norm, arma::uword width, Impl impl) {
  if (norm == Norm::LayerNorm) return std::make_unique<LayerNorm>(name, width, impl);
  if (norm == Norm::RMSNorm) return std::make_unique<RMSNorm>(name, width, impl);
  if (norm == Norm::BatchNorm) {
    if (impl != Impl::Composed) throw Error("BatchNorm '" + name + "': has one implementation, composed (no fused kernel)");
    return std::make_unique<BatchNorm>(name, width);
  }
  return nullptr;
}

LayerNorm::LayerNorm(const std::string& name, arma::uword features, Impl impl, double eps)
    : gamma(name + ".gamma", arma::mat(1, features, arma::fill::ones)),
      beta(name + ".beta", arma::mat(1, features, arma::fill::zeros)),
      impl_(impl),
      eps_(eps) {}

Var LayerNorm::forward(Var x) {
  Tape& tape = tape_of("LayerNorm", x);
  Var g = tape.param(gamma), b = tape.param(beta);
  return impl_ == Impl::Composed ? layernorm_composed(x, g, b, eps_) : layernorm_fused(x, g, b, eps_);
}

std::string LayerNorm::describe() const {
  return "LayerNorm(" + std::to_string(gamma.value().n_cols) + ", " + impl_name(impl_) + ")";
}

RMSNorm::RMSNorm(const std::string& name, arma::uword features, Impl impl, double eps)
    : gamma(name + ".gamma", arma::mat(1, features, arma::fill::ones)), impl_(impl), eps_(eps) {}

Var RMSNorm::forward(Var x) {
  Tape& tape = tape_of("RMSNorm", x);
  Var g = tape.param(gamma);
  return impl_ == Impl::Composed ? rmsnorm_composed(x, g, eps_) : rmsnorm_fused(x, g, eps_);
}

std::string RMSNorm::describe() const {
  return "RMSNorm(" + std::to_string(gamma.value().n_cols) + ", " + impl_name(impl_) + ")";
}

BatchNorm::BatchNorm(const std::string& name, arma::uword features, double momentum, double eps)
    : gamma(name + ".gamma", arma::mat(1, features, arma::fill::ones)),
      beta(name + ".beta", arma::mat(1, features, arma::fill::zeros)),
      running_mean(1, features, arma::fill::zeros),
      running_var(1, features, arma::fill::ones),
      name_(name),
      momentum_(momentum),
      eps_(eps) {
  if (!(momentum >= 0 && momentum <= 1) || !(eps > 0) || !std::isfinite(eps)) {
    std::ostringstream got;
    got << "momentum " << momentum << ", eps " << eps;
    throw Error("BatchNorm '" + name + "': needs momentum in [0, 1] and eps > 0, got " + got.str());
  }
}

Var BatchNorm::forward(Var x) {
  if (x.cols() != gamma.value().n_cols) {
    throw Error("BatchNorm '" + name_ + "': x must have " + std::to_string(gamma.value().n_cols) +
                " columns (one per feature), got " + x.shape());
  }
  return training() ? forward_training(x) : forward_eval(x);
}

Var BatchNorm::forward_training(Var x) {
  const arma::mat& v = x.value();
  if (v.n_rows < 2) {
    throw Error("BatchNorm '" + name_ + "' in training mode needs at least 2 samples (rows) per batch; x is " +
                x.shape() + " (one sample's variance is 0, and the unbiased running variance divides by N - 1)." +
                " Use eval() to normalise single samples with the running statistics");
  }
  Tape& tape = tape_of("BatchNorm", x);
  Var y = batchnorm_composed(x, tape.param(gamma), tape.param(beta), eps_);
  // Bookkeeping outside the tape: the statistics are plain numbers, not differentiated.
  // arma::var with norm_type 0 divides by N - 1: the unbiased variance, as PyTorch tracks it
  // (the normalisation above used the biased one).
  running_mean = (1 - momentum_) * running_mean + momentum_ * arma::mean(v, 0);
  running_var = (1 - momentum_) * running_var + momentum_ * arma::var(v, 0, 0);
  return y;
}

// (x - running_mean) / sqrt(running_var + eps) * gamma + beta: the running
// statistics enter as constants, so gradients reach x, gamma and beta only.
Var BatchNorm::forward_eval(Var x) {
  Tape& tape = tape_of("BatchNorm", x);
  Var mean = tape.constant(running_mean, name_ + ".running_mean");
  Var stdev = tape.constant(arma::sqrt(running_var + eps_), name_ + ".sqrt(running_var + eps)");
  return (x - mean) / stdev * tape.param(gamma) + tape.param(beta);
}

std::string BatchNorm::describe() const {
  return "BatchNorm(" + std::to_string(gamma.value().n_cols) + (training() ? ", training)" : ", eval)");
}

}  // namespace ag
