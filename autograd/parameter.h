// A parameter: a leaf whose value and gradient outlive any tape.
//
// A training step records on a fresh (or cleared) tape, reads each parameter
// with tape.param(p), and backward adds into p.grad(). The tape copies the
// value, so an in-place change after recording (an optimizer step before
// backward) cannot corrupt that tape's gradients.
//
// Lifetimes. A Parameter's name, value and gradient live in one state on the
// heap that moves with it; a tape keeps a weak handle to that state, never the
// Parameter's address. So a Parameter moved after tape.param(p) (a
// std::vector<Parameter> that grew, a module moved into place) still gets its
// gradient, and one destroyed (or move-assigned over) before backward makes
// backward throw an ag::Error naming it. Copying a Parameter makes a new,
// independent state; a moved-from Parameter throws if used.
//
// Threads. Backward adds into grad() under the parameter's own lock, so tapes
// on several threads may share parameters and no gradient is lost; the order
// of the additions then follows the scheduler, and so do the sum's last bits.
// For bit-identical results keep each tape's parameter gradients on the tape
// (Tape::keep_param_grads) and add them in a fixed order (Tape::add_param_grads),
// as the trainers do (train/shards.h).
#pragma once

#include <armadillo>

#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "autograd/error.h"

namespace ag {

// What a Parameter owns and a tape refers to (weakly).
struct ParameterState {
  std::string name;
  arma::mat value;
  arma::mat grad;
  std::mutex grad_mutex;  // held while a backward adds into grad
};

class Parameter {
 public:
  Parameter() : Parameter(std::string(), arma::mat()) {}
  Parameter(std::string name, arma::mat value) : state_(std::make_shared<ParameterState>()) {
    state_->name = std::move(name);
    state_->value = std::move(value);
    state_->grad.zeros(arma::size(state_->value));
  }
  Parameter(const Parameter& other) : Parameter(other.name(), other.value()) { state_->grad = other.grad(); }
  Parameter& operator=(const Parameter& other) {  // copies into this state: tapes that read it keep it
    if (this == &other) return *this;
    if (!state_) state_ = std::make_shared<ParameterState>();
    state_->name = other.name();
    state_->value = other.value();
    state_->grad = other.grad();
    return *this;
  }
  Parameter(Parameter&&) noexcept = default;             // the state moves; tapes follow it
  Parameter& operator=(Parameter&&) noexcept = default;  // this one's old state is gone
  ~Parameter() = default;

  const std::string& name() const { return state().name; }
  const arma::mat& value() const { return state().value; }
  const arma::mat& grad() const { return state().grad; }

  // Every in-place change goes through here (optimizers, checkpoint loads).
  arma::mat& mutable_value() { return state().value; }
  arma::mat& mutable_grad() { return state().grad; }
  void zero_grad() { state().grad.zeros(arma::size(state().value)); }

  // What a tape keeps: the state, not this object's address.
  std::weak_ptr<ParameterState> handle() const {
    state();
    return state_;
  }

 private:
  ParameterState& state() const {
    if (!state_) throw Error("Parameter: this parameter was moved from; use the one it was moved into");
    return *state_;
  }
  std::shared_ptr<ParameterState> state_;
};

}  // namespace ag
