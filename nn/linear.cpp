#include "nn/linear.h"

#include <cmath>

#include "ops/ops.h"

namespace ag {

namespace {
arma::mat init_weight(arma::uword in, arma::uword out, Rng& rng, Init init, double scale) {
  const double bound = scale * (init == Init::Kaiming ? std::sqrt(6.0 / static_cast<double>(in))
                                                      : std::sqrt(6.0 / static_cast<double>(in + out)));
  return rng.uniform(in, out, -bound, bound);
}
}  // namespace

Linear::Linear(const std::string& name, arma::uword in_features, arma::uword out_features, Rng& rng,
               Init init, double scale)
    : weight(name + ".weight", init_weight(in_features, out_features, rng, init, scale)),
      bias(name + ".bias", arma::mat(1, out_features, arma::fill::zeros)),
      name_(name) {
  if (in_features == 0 || out_features == 0) {
    throw Error("Linear '" + name + "': sizes must be positive, got " + std::to_string(in_features) +
                " -> " + std::to_string(out_features));
  }
}

// y = x W + b  (b broadcast over the rows)
Var Linear::forward(Var x) {
  Tape& tape = tape_of("Linear", x);
  if (x.cols() != weight.value().n_rows) {
    throw Error("Linear '" + name_ + "': the input is " + x.shape() + ", expected N x " +
                std::to_string(weight.value().n_rows));
  }
  return matmul(x, tape.param(weight)) + tape.param(bias);
}

std::string Linear::describe() const {
  return "Linear(" + std::to_string(weight.value().n_rows) + " -> " +
         std::to_string(weight.value().n_cols) + ")";
}

}  // namespace ag
