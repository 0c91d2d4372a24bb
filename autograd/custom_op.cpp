#include "autograd/custom_op.h"

namespace ag {

namespace {
// Appends a matrix that reads `m`'s memory in place (Armadillo's strict
// auxiliary memory: it never reallocates or frees it), constructed where it
// stays (moving one would copy it): the Function sees its inputs as
// `const Inputs&`, so it reads the tape's values without a copy of each; a
// copy it makes of one is its own, as before.
void push_alias(Inputs& values, const arma::mat& m) {
  if (m.is_empty()) {
    values.emplace_back(m.n_rows, m.n_cols);  // no memory to read: an empty matrix of its shape
    return;
  }
  values.emplace_back(const_cast<double*>(m.memptr()), m.n_rows, m.n_cols, /*copy_aux_mem=*/false, /*strict=*/true);
}
}  // namespace

Var apply(const Function& f, const std::vector<Var>& inputs) {
  if (inputs.empty()) throw Error(f.name + ": a custom op needs at least one input");
  if (!f.forward || !f.backward) throw Error(f.name + ": a custom op needs both a forward and a backward");
  Tape& t = tape_of(f.name.c_str(), inputs[0]);
  Inputs values;
  values.reserve(inputs.size());
  for (const Var& v : inputs) {
    t.check(v, f.name.c_str());
    push_alias(values, v.value());
  }
  arma::mat y = f.forward(values);
  return t.record(f.name, inputs, std::move(y), CustomBackward{f}, Saved{inputs, true}, f.jvp);
}

void CustomBackward::operator()(Tape& tape, const Node& self) const {
  Inputs values;
  values.reserve(self.inputs.size());
  for (std::size_t id : self.inputs) push_alias(values, tape.value(id));
  Grads grads = f.backward(values, self.value, self.grad);
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
    tape.accumulate(self.inputs[k], std::move(grads[k]));
  }
}

const Function* custom_function(const Node& node) {
  const CustomBackward* b = node.backward.target<CustomBackward>();
  return b != nullptr ? &b->f : nullptr;
}

}  // namespace ag
