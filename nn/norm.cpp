#include "nn/norm.h"

#include "ops/layernorm.h"

namespace ag {

const char* impl_name(Impl impl) { return impl == Impl::Composed ? "composed" : "fused"; }

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

}  // namespace ag
