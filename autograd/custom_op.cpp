#include "autograd/custom_op.h"

namespace ag {

Var apply(const Function& f, const std::vector<Var>& inputs) {
  if (inputs.empty()) throw Error(f.name + ": a custom op needs at least one input");
  if (!f.forward || !f.backward) throw Error(f.name + ": a custom op needs both a forward and a backward");
  Tape& t = tape_of(f.name.c_str(), inputs[0]);
  Inputs values;
  for (const Var& v : inputs) {
    t.check(v, f.name.c_str());
    values.push_back(v.value());
  }
  arma::mat y = f.forward(values);
  return t.record(f.name, inputs, std::move(y), CustomBackward{f}, Saved{inputs, true}, f.jvp);
}

void CustomBackward::operator()(Tape& tape, const Node& self) const {
  Inputs values;
  for (std::size_t id : self.inputs) values.push_back(tape.value(id));
  const Grads grads = f.backward(values, self.value, self.grad);
  if (grads.size() != values.size()) {
    throw Error("backward of custom op '" + f.name + "' returned " + std::to_string(grads.size()) +
                " gradients for " + std::to_string(values.size()) + " inputs (one per input, empty for none)");
  }
  for (std::size_t k = 0; k < grads.size(); ++k) {
    if (grads[k].is_empty()) continue;  // this input needs no gradient
    if (grads[k].n_rows != values[k].n_rows || grads[k].n_cols != values[k].n_cols) {
      throw Error("backward of custom op '" + f.name + "' returned a " + shape_str(grads[k]) +
                  " gradient for input " + std::to_string(k) + ", which is " + shape_str(values[k]) +
                  " (a gradient has the shape of its input)");
    }
    tape.accumulate(self.inputs[k], grads[k]);
  }
}

const Function* custom_function(const Node& node) {
  const CustomBackward* b = node.backward.target<CustomBackward>();
  return b != nullptr ? &b->f : nullptr;
}

}  // namespace ag
