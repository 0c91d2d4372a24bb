#include "nn/optim.h"

#include <cmath>
#include <sstream>

#include "autograd/tape.h"

namespace ag {

Optimizer::Optimizer(std::vector<Parameter*> params, double lr) : params_(std::move(params)), lr_(lr) {}

void Optimizer::zero_grad() {
  for (Parameter* p : params_) p->zero_grad();
}

namespace {
std::vector<arma::mat> zeros_like(const std::vector<Parameter*>& params) {
  std::vector<arma::mat> state;
  for (const Parameter* p : params) state.emplace_back(arma::size(p->value()), arma::fill::zeros);
  return state;
}
}  // namespace

SGD::SGD(std::vector<Parameter*> params, SgdOptions options)
    : Optimizer(std::move(params), options.lr), options_(options), velocity_(zeros_like(params_)) {}

void SGD::step() {
  for (std::size_t i = 0; i < params_.size(); ++i) {
    Parameter& p = *params_[i];
    arma::mat g = p.grad() + options_.weight_decay * p.value();
    if (options_.momentum != 0.0) {
      velocity_[i] = options_.momentum * velocity_[i] + g;
      g = velocity_[i];
    }
    p.mutable_value() -= lr_ * g;
  }
}

Adam::Adam(std::vector<Parameter*> params, AdamOptions options, bool decoupled)
    : Optimizer(std::move(params), options.lr),
      options_(options),
      decoupled_(decoupled),
      m_(zeros_like(params_)),
      v_(zeros_like(params_)) {}

void Adam::step() {
  ++t_;
  const double b1 = options_.beta1, b2 = options_.beta2;
  // PyTorch's arrangement: step = lr / (1 - b1^t), denom = sqrt(v) / sqrt(1 - b2^t) + eps.
  const double step_size = lr_ / (1.0 - std::pow(b1, static_cast<double>(t_)));
  const double sqrt_correction2 = std::sqrt(1.0 - std::pow(b2, static_cast<double>(t_)));
  for (std::size_t i = 0; i < params_.size(); ++i) {
    Parameter& p = *params_[i];
    arma::mat& value = p.mutable_value();
    if (decoupled_) value *= 1.0 - lr_ * options_.weight_decay;
    const bool l2 = !decoupled_ && options_.weight_decay != 0.0;
    const arma::mat g = l2 ? arma::mat(p.grad() + options_.weight_decay * value) : arma::mat();
    const double* gd = l2 ? g.memptr() : p.grad().memptr();
    // One pass over the elements: Adam is a large share of a small model's step.
    double* x = value.memptr();
    double* m = m_[i].memptr();
    double* v = v_[i].memptr();
    for (arma::uword k = 0; k < value.n_elem; ++k) {
      m[k] = b1 * m[k] + (1.0 - b1) * gd[k];
      v[k] = b2 * v[k] + (1.0 - b2) * gd[k] * gd[k];
      x[k] -= step_size * m[k] / (std::sqrt(v[k]) / sqrt_correction2 + options_.eps);
    }
  }
}

double clip_grad_norm(const std::vector<Parameter*>& params, double max_norm) {
  // A negative bound would flip every gradient; NaN would compare false and clip nothing.
  if (!(max_norm >= 0)) {
    std::ostringstream os;
    os << "clip_grad_norm: max_norm must be >= 0, got " << max_norm;
    throw Error(os.str());
  }
  double sum_squares = 0.0;
  for (const Parameter* p : params) sum_squares += arma::accu(arma::square(p->grad()));
  const double norm = std::sqrt(sum_squares);
  if (norm > max_norm) {
    const double scale = max_norm / (norm + 1e-6);
    for (Parameter* p : params) p->mutable_grad() *= scale;
  }
  return norm;
}

}  // namespace ag
