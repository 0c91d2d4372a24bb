#include "autograd/tape.h"

#include <sstream>

namespace ag {

std::string shape_str(arma::uword rows, arma::uword cols) {
  return std::to_string(rows) + "x" + std::to_string(cols);
}
std::string shape_str(const arma::mat& m) { return shape_str(m.n_rows, m.n_cols); }

const arma::mat& Var::value() const {
  if (tape == nullptr) throw Error("Var: this handle is empty (it was never recorded on a tape)");
  return tape->value(*this);
}
const arma::mat& Var::grad() const {
  if (tape == nullptr) throw Error("Var: this handle is empty (it was never recorded on a tape)");
  return tape->grad(*this);
}

Tape& tape_of(const char* op, Var a) {
  if (a.tape == nullptr) throw Error(std::string(op) + ": the input is an empty Var (never recorded on a tape)");
  a.tape->check(a, op);
  return *a.tape;
}

Tape& tape_of(const char* op, Var a, Var b) {
  Tape& t = tape_of(op, a);
  if (b.tape != a.tape) throw Error(std::string(op) + ": the two inputs were recorded on different tapes");
  t.check(b, op);
  return t;
}

namespace {
std::string node_name(const Node& n, std::size_t id) {
  return "'" + n.op + "' (node " + std::to_string(id) + ", " + shape_str(n.value) + ")";
}
}  // namespace

void Tape::check(Var v, const char* what) const {
  if (v.tape != this)
    throw Error(std::string(what) + ": the value belongs to another tape");
  if (v.generation != generation_ || v.id >= nodes_.size())
    throw Error(std::string(what) + ": the value belongs to a tape that was cleared since it was recorded");
}

const arma::mat& Tape::value(Var v) const {
  check(v, "value");
  return nodes_[v.id].value;
}

const arma::mat& Tape::grad(Var v) const {
  check(v, "grad");
  const Node& n = nodes_[v.id];
  // A node no gradient reached has gradient zero; materialise it on demand.
  if (n.grad.n_elem != n.value.n_elem) {
    const_cast<Node&>(n).grad.zeros(arma::size(n.value));
  }
  return n.grad;
}

Var Tape::push(Node node) {
  if (anomaly_ && !node.value.is_finite()) {
    throw AnomalyError("anomaly: forward of " + node_name(node, nodes_.size()) +
                       " produced NaN or inf");
  }
  nodes_.push_back(std::move(node));
  return Var{this, nodes_.size() - 1, generation_};
}

Var Tape::leaf(arma::mat value, std::string name) {
  Node n;
  n.op = std::move(name);
  n.value = std::move(value);
  n.requires_grad = true;
  return push(std::move(n));
}

Var Tape::constant(arma::mat value, std::string name) {
  Node n;
  n.op = std::move(name);
  n.value = std::move(value);
  return push(std::move(n));
}

Var Tape::param(Parameter& p) {
  Node n;
  n.op = "param:" + p.name();
  n.value = p.value();
  n.param = &p;
  n.param_version = p.version();
  n.requires_grad = grad_enabled_;
  return push(std::move(n));
}

Var Tape::record(std::string op, const std::vector<Var>& inputs, arma::mat value,
                 BackwardFn backward, const Saved& saved) {
  Node n;
  n.op = std::move(op);
  n.value = std::move(value);
  bool any = false;
  for (const Var& v : inputs) {
    check(v, n.op.c_str());
    any = any || nodes_[v.id].requires_grad;
  }
  // Nothing to differentiate (constants only, or no_grad): keep the value, drop the rest.
  if (any && grad_enabled_) {
    n.requires_grad = true;
    n.inputs.reserve(inputs.size());
    for (const Var& v : inputs) n.inputs.push_back(v.id);
    n.saved.reserve(saved.inputs.size() + 1);
    for (const Var& v : saved.inputs) n.saved.push_back(v.id);
    if (saved.output) n.saved.push_back(nodes_.size());
    n.extra_saved_bytes = saved.extra_bytes;
    n.backward = std::move(backward);
  }
  return push(std::move(n));
}

void Tape::accumulate(std::size_t id, const arma::mat& g) {
  Node& n = nodes_[id];
  if (!n.requires_grad) return;
  if (g.n_rows != n.value.n_rows || g.n_cols != n.value.n_cols) {
    const Node& from = nodes_[current_node_];
    throw Error("backward of " + node_name(from, current_node_) + " produced a " + shape_str(g) +
                " gradient for its input " + node_name(n, id) + "; expected " + shape_str(n.value));
  }
  if (anomaly_ && !g.is_finite()) {
    const Node& from = nodes_[current_node_];
    throw AnomalyError("anomaly: backward of " + node_name(from, current_node_) +
                       " produced NaN or inf in the gradient of its input " + node_name(n, id));
  }
  if (n.grad.n_elem != n.value.n_elem) {
    n.grad = g;
  } else {
    n.grad += g;
  }
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

void Tape::backward(Var output, const arma::mat& doutput, bool retain_graph) {
  check(output, "backward");
  Node& out = nodes_[output.id];
  if (doutput.n_rows != out.value.n_rows || doutput.n_cols != out.value.n_cols) {
    throw Error("backward: the output gradient is " + shape_str(doutput) + " but the output " +
                node_name(out, output.id) + " is " + shape_str(out.value));
  }
  if (!out.requires_grad) {
    throw Error("backward: the output " + node_name(out, output.id) +
                " does not depend on any leaf or parameter that needs a gradient");
  }
  // Intermediate gradients belong to this pass; leaf gradients accumulate.
  for (Node& n : nodes_) {
    if (n.backward || n.freed || n.param != nullptr) n.grad.reset();
  }
  if (out.grad.n_elem != out.value.n_elem) {
    out.grad = doutput;
  } else {
    out.grad += doutput;
  }
  in_backward_ = true;
  try {
    run_backward(output.id);
  } catch (...) {
    in_backward_ = false;
    throw;
  }
  in_backward_ = false;
  if (!retain_graph) {
    for (std::size_t i = 0; i <= output.id; ++i) {
      Node& n = nodes_[i];
      if (n.backward) {
        n.backward = nullptr;
        n.freed = true;
      }
    }
  }
}

void Tape::run_backward(std::size_t output) {
  for (std::size_t i = output + 1; i-- > 0;) {
    Node& n = nodes_[i];
    if (!n.requires_grad || n.grad.n_elem == 0) continue;
    current_node_ = i;
    if (n.param != nullptr) {
      n.param->mutable_grad() += n.grad;
      continue;
    }
    if (n.freed) {
      throw Error("backward through " + node_name(n, i) +
                  " a second time: its saved tensors were freed after the first backward; "
                  "pass retain_graph=true to the first call");
    }
    for (std::size_t id : n.saved) {
      const Node& s = nodes_[id];
      if (s.param != nullptr && s.param->version() != s.param_version) {
        throw Error("backward of " + node_name(n, i) + ": it saved parameter '" + s.param->name() +
                    "' for backward, and the parameter was modified in place since (version " +
                    std::to_string(s.param_version) + ", now " + std::to_string(s.param->version()) + ")");
      }
    }
    if (n.backward) {
      // The closure reaches nodes_ only through accumulate, which never
      // reallocates, so the reference n stays valid across the call.
      n.backward(*this, n);
    }
  }
}

void Tape::clear() {
  nodes_.clear();
  ++generation_;
}

std::size_t Tape::saved_bytes() const {
  std::vector<bool> counted(nodes_.size(), false);
  std::size_t bytes = 0;
  for (const Node& n : nodes_) {
    if (!n.backward) continue;
    bytes += n.extra_saved_bytes;
    for (std::size_t id : n.saved) {
      if (counted[id]) continue;
      counted[id] = true;
      bytes += nodes_[id].value.n_elem * sizeof(double);
    }
  }
  return bytes;
}

}  // namespace ag
