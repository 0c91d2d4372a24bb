// The reverse pass: gradients accumulate into a node's inputs, walked in
// reverse order from the output (Stan's loop). Split from tape.cpp, which
// records; both are the one class Tape.
#include <mutex>

#include "autograd/tape.h"

namespace ag {

Node* Tape::gradient_target(std::size_t id, const arma::mat& g) {
  Node& n = nodes_[id];
  if (!n.requires_grad) return nullptr;
  if (arma::size(g) != arma::size(n.value)) {
    const Node& from = nodes_[current_node_];
    throw Error("backward of " + node_name(from, current_node_) + " produced a " + shape_str(g) +
                " gradient for its input " + node_name(n, id) + "; expected " + shape_str(n.value));
  }
  refuse_non_finite(n, id, g);
  return &n;
}

void Tape::refuse_non_finite(const Node& n, std::size_t id, const arma::mat& g) const {
  if (anomaly_ && !g.is_finite()) {
    const Node& from = nodes_[current_node_];
    throw AnomalyError("anomaly: backward of " + node_name(from, current_node_) +
                       " produced NaN or inf in the gradient of its input " + node_name(n, id));
  }
}

// The first gradient to reach a node is assigned (its grad is still unsized);
// later ones are added. Sizes, not element counts, tell the two apart, so a
// 0x3 node's first gradient is assigned too.
void Tape::accumulate(std::size_t id, const arma::mat& g) {
  Node* n = gradient_target(id, g);
  if (n == nullptr) return;
  if (arma::size(n->grad) != arma::size(n->value)) {
    n->grad = g;
  } else {
    n->grad += g;
  }
}

void Tape::accumulate(std::size_t id, arma::mat&& g) {
  Node* n = gradient_target(id, g);
  if (n == nullptr) return;
  if (arma::size(n->grad) != arma::size(n->value)) {
    n->grad = std::move(g);
  } else {
    n->grad += g;
  }
}

// The same sum, in the same order, as accumulating the block padded with
// zeros (x + 0 is x), but for the sign of a zero; the attention's slices per
// sequence and head zero-filled and added a whole input each before.
void Tape::accumulate_block(std::size_t id, arma::uword row, arma::uword col, const arma::mat& g) {
  Node& n = nodes_[id];
  if (!n.requires_grad) return;
  if (row + g.n_rows > n.value.n_rows || col + g.n_cols > n.value.n_cols) {
    const Node& from = nodes_[current_node_];
    throw Error("backward of " + node_name(from, current_node_) + " produced a " + shape_str(g) + " block at (" +
                std::to_string(row) + ", " + std::to_string(col) + ") for its input " + node_name(n, id) +
                ", which is " + shape_str(n.value));
  }
  refuse_non_finite(n, id, g);
  if (arma::size(n.grad) != arma::size(n.value)) n.grad.zeros(arma::size(n.value));
  if (!g.is_empty()) n.grad.submat(row, col, arma::size(g)) += g;
}

arma::mat Tape::take_grad(const Node& self) {
  if (keep_intermediate_grads_ || !in_backward_ || &nodes_[current_node_] != &self) return self.grad;
  return std::move(self.grad);  // Node::grad is mutable: run_backward resets it after this closure
}

void Tape::backward(Var output, bool retain_graph) {
  check(output, "backward");
  const arma::mat& v = nodes_[output.id].value;
  if (v.n_elem != 1) {
    throw Error("backward: the output " + node_name(nodes_[output.id], output.id) +
                " is not 1x1; pass an output gradient of shape " + shape_str(v));
  }
  backward(output, arma::mat(1, 1, arma::fill::ones), retain_graph);
}

Node& Tape::start_backward(Var output, const arma::mat& doutput) {
  refuse_inside_backward("started another backward");
  check(output, "backward");
  Node& out = nodes_[output.id];
  if (arma::size(doutput) != arma::size(out.value)) {
    throw Error("backward: the output gradient is " + shape_str(doutput) + " but the output " +
                node_name(out, output.id) + " is " + shape_str(out.value));
  }
  if (!out.requires_grad) {
    throw Error("backward: the output " + node_name(out, output.id) +
                " does not depend on any leaf or parameter that needs a gradient");
  }
  // Intermediate gradients belong to this pass; leaf gradients accumulate.
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    Node& n = nodes_[i];
    if (n.backward || n.freed || (n.is_param && !keep_param_grads_)) {
      n.grad.reset();
      n.grad_freed = false;
    }
  }
  return out;
}

void Tape::backward(Var output, const arma::mat& doutput, bool retain_graph) {
  Node& out = start_backward(output, doutput);
  if (arma::size(out.grad) != arma::size(out.value)) {
    out.grad = doutput;
  } else {
    out.grad += doutput;  // the output is a leaf: its gradient accumulates
  }
  finish_backward(output.id, retain_graph);
}

void Tape::backward(Var output, arma::mat&& doutput, bool retain_graph) {
  Node& out = start_backward(output, doutput);
  if (arma::size(out.grad) != arma::size(out.value)) {
    out.grad = std::move(doutput);
  } else {
    out.grad += doutput;
  }
  finish_backward(output.id, retain_graph);
}

void Tape::finish_backward(std::size_t output, bool retain_graph) {
  in_backward_ = true;
  try {
    run_backward(output);
  } catch (...) {
    in_backward_ = false;
    throw;
  }
  in_backward_ = false;
  if (!retain_graph) {
    for (std::size_t i = 0; i <= output; ++i) {
      Node& n = nodes_[i];
      if (n.backward) {
        n.backward = nullptr;
        n.freed = true;
      }
    }
  }
}

namespace {
Error freed_error(const Node& n, std::size_t id) {
  return Error("backward through " + node_name(n, id) +
               " a second time: its saved tensors were freed after the first backward; "
               "pass retain_graph=true to the first call");
}
}  // namespace

// Stan's reverse loop: every node after the output is irrelevant, and a node
// no gradient reached (or an empty one, whose gradient is nothing) adds nothing.
void Tape::run_backward(std::size_t output) {
  for (std::size_t i = output + 1; i-- > 0;) {
    Node& n = nodes_[i];
    if (!n.requires_grad || n.grad.n_elem == 0) continue;
    current_node_ = i;
    if (n.is_param) add_to_parameter(n, i);
    else if (n.freed) throw freed_error(n, i);
    else if (n.backward) {
      n.backward(*this, n);
      if (!keep_intermediate_grads_) {  // nothing reads it again: its inputs have theirs
        n.grad.reset();
        n.grad_freed = true;
      }
    }
  }
}

namespace {
// The gradient of a parameter node into its Parameter, under the parameter's lock.
void add_into(const Node& n, std::size_t id) {
  const std::shared_ptr<ParameterState> p = n.param.lock();
  if (!p) {
    throw Error("backward: parameter " + node_name(n, id) +
                " was destroyed before backward; keep a Parameter alive until every tape that read it ran backward");
  }
  std::lock_guard<std::mutex> lock(p->grad_mutex);
  if (arma::size(p->grad) != arma::size(n.grad)) {
    throw Error("backward: parameter " + node_name(n, id) + " has a " + shape_str(p->grad) +
                " gradient now; it was reshaped after the tape read it");
  }
  p->grad += n.grad;
}
}  // namespace

void Tape::add_to_parameter(Node& n, std::size_t id) {
  if (!keep_param_grads_) add_into(n, id);  // else it stays on the tape until add_param_grads()
}

void Tape::add_param_grads() {
  refuse_inside_backward("added parameter gradients");
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    Node& n = nodes_[i];
    if (!n.is_param || arma::size(n.grad) != arma::size(n.value)) continue;  // no gradient reached it
    add_into(n, i);
    n.grad.reset();
  }
}

}  // namespace ag
