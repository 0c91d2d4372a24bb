// A parameter: a leaf whose value and gradient outlive any tape.
//
// A training step records on a fresh (or cleared) tape, reads each parameter
// with tape.param(p), and backward adds into p.grad(). The tape copies the
// value, so an in-place change after recording (an optimizer step before
// backward) cannot corrupt that tape's gradients.
#pragma once

#include <armadillo>

#include <string>
#include <utility>

namespace ag {

class Parameter {
 public:
  Parameter() = default;
  Parameter(std::string name, arma::mat value)
      : name_(std::move(name)), value_(std::move(value)), grad_(arma::size(value_), arma::fill::zeros) {}

  const std::string& name() const { return name_; }
  const arma::mat& value() const { return value_; }
  const arma::mat& grad() const { return grad_; }

  // Every in-place change goes through here (optimizers, checkpoint loads).
  arma::mat& mutable_value() { return value_; }
  arma::mat& mutable_grad() { return grad_; }
  void zero_grad() { grad_.zeros(arma::size(value_)); }

 private:
  std::string name_;
  arma::mat value_;
  arma::mat grad_;
};

}  // namespace ag
