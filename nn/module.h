// Modules: a layer is a forward function plus the parameters it owns.
//
// A Module records its forward on the tape of its input (each parameter enters
// as tape.param(p)), so one training step is: clear the tape, forward, loss,
// backward; the parameters keep their values and gradients between steps.
// parameters() lists them in a fixed order with dotted names ("fc1.weight"),
// which optimizers and checkpoints rely on.
//
// A module is in training mode until eval() (PyTorch's switch). Only layers
// whose forward differs between the two look at training(): BatchNorm uses the
// batch's statistics in training and its running statistics in eval mode.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "autograd/parameter.h"
#include "autograd/tape.h"

namespace ag {

// A matrix a module keeps for evaluation that no gradient trains (BatchNorm's
// running statistics): saved in checkpoints after the parameters, by name.
struct Statistic {
  std::string name;  // "norm1.running_mean"
  arma::mat* value;
};

class Module {
 public:
  virtual ~Module() = default;
  Module() = default;
  Module(const Module&) = delete;  // tapes hold pointers to the parameters
  Module& operator=(const Module&) = delete;
  Module(Module&&) = default;  // a Sequential moves its layers' pointers, not the layers
  Module& operator=(Module&&) = default;

  virtual Var forward(Var x) = 0;
  virtual std::vector<Parameter*> parameters() { return {}; }
  virtual std::vector<Statistic> statistics() { return {}; }
  virtual std::string describe() const = 0;  // "Linear(64 -> 128)"

  Var operator()(Var x) { return forward(x); }
  void zero_grad();
  std::size_t parameter_count();  // number of scalars

  // Training mode (the default) or eval mode; a Sequential passes it to its layers.
  virtual void train(bool on = true) { training_ = on; }
  void eval() { train(false); }
  bool training() const { return training_; }

 private:
  bool training_ = true;
};

// Layers applied in order; parameters() concatenates theirs.
class Sequential : public Module {
 public:
  Sequential() = default;
  void add(std::unique_ptr<Module> layer);
  Var forward(Var x) override;
  std::vector<Parameter*> parameters() override;
  std::vector<Statistic> statistics() override;  // the layers', in order
  std::string describe() const override;  // one line per layer
  void train(bool on = true) override;    // this and every layer
  std::size_t size() const { return layers_.size(); }
  Module& layer(std::size_t i) { return *layers_.at(i); }

 private:
  std::vector<std::unique_ptr<Module>> layers_;
};

}  // namespace ag
