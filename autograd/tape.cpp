#include "autograd/tape.h"

#include <cstring>
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
  if (b.tape == nullptr)
    throw Error(std::string(op) + ": the second input is an empty Var (never recorded on a tape)");
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

// Nodes are built in place at the end of nodes_: a Node is large (two
// matrices, a closure, a name), and the per-op cost of the tape is mostly
// moving and allocating, not arithmetic.
Node& Tape::new_node(std::string op, arma::mat value) {
  Node& n = nodes_.emplace_back();
  n.op = std::move(op);
  n.value = std::move(value);
  return n;
}

Var Tape::finish_node() {
  const Node& n = nodes_.back();
  if (anomaly_ && !n.value.is_finite()) {
    const std::string message = "anomaly: forward of " + node_name(n, nodes_.size() - 1) +
                                " produced NaN or inf";
    nodes_.pop_back();
    throw AnomalyError(message);
  }
  return Var{this, nodes_.size() - 1, generation_};
}

std::vector<std::size_t> Tape::spare_ids() {
  if (spare_ids_.empty()) return {};
  std::vector<std::size_t> ids = std::move(spare_ids_.back());
  spare_ids_.pop_back();
  return ids;
}

Var Tape::leaf(arma::mat value, std::string name) {
  new_node(std::move(name), std::move(value)).requires_grad = true;
  return finish_node();
}

Var Tape::constant(arma::mat value, std::string name) {
  new_node(std::move(name), std::move(value));
  return finish_node();
}

Var Tape::param(Parameter& p) {
  Node& n = new_node("param:" + p.name(), p.value());
  n.param = &p;
  n.param_version = p.version();
  n.requires_grad = grad_enabled_;
  return finish_node();
}

Var Tape::record(std::string op, const std::vector<Var>& inputs, arma::mat value,
                 BackwardFn backward, const Saved& saved) {
  bool any = false;
  for (const Var& v : inputs) {
    check(v, op.c_str());
    any = any || nodes_[v.id].requires_grad;
  }
  const std::size_t id = nodes_.size();
  Node& n = new_node(std::move(op), std::move(value));
  // Nothing to differentiate (constants only, or no_grad): keep the value, drop the rest.
  if (any && grad_enabled_) {
    n.requires_grad = true;
    n.inputs = spare_ids();
    for (const Var& v : inputs) n.inputs.push_back(v.id);
    if (!saved.inputs.empty() || saved.output) {
      n.saved = spare_ids();
      for (const Var& v : saved.inputs) n.saved.push_back(v.id);
      if (saved.output) n.saved.push_back(id);
    }
    n.extra_saved_bytes = saved.extra_bytes;
    n.backward = std::move(backward);
  }
  return finish_node();
}

void Tape::set_attribute(Var v, const char* name, double value) {
  check(v, "set_attribute");
  nodes_[v.id].attributes.push_back({name, value});
}

double attribute(const Node& node, const char* name) {
  for (const Attribute& a : node.attributes) {
    if (std::strcmp(a.name, name) == 0) return a.value;
  }
  throw Error("'" + node.op + "' has no attribute '" + name + "'");
}

std::string op_label(const Node& node) {
  std::ostringstream os;
  os << node.op;
  for (const Attribute& a : node.attributes) os << " " << a.name << "=" << a.value;
  return os.str();
}

Node* Tape::gradient_target(std::size_t id, const arma::mat& g) {
  Node& n = nodes_[id];
  if (!n.requires_grad) return nullptr;
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
  return &n;
}

void Tape::accumulate(std::size_t id, const arma::mat& g) {
  Node* n = gradient_target(id, g);
  if (n == nullptr) return;
  if (n->grad.n_elem != n->value.n_elem) {
    n->grad = g;
  } else {
    n->grad += g;
  }
}

void Tape::accumulate(std::size_t id, arma::mat&& g) {
  Node* n = gradient_target(id, g);
  if (n == nullptr) return;
  if (n->grad.n_elem != n->value.n_elem) {
    n->grad = std::move(g);
  } else {
    n->grad += g;
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

Node& Tape::start_backward(Var output, const arma::mat& doutput) {
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
  return out;
}

void Tape::backward(Var output, const arma::mat& doutput, bool retain_graph) {
  Node& out = start_backward(output, doutput);
  if (out.grad.n_elem != out.value.n_elem) {
    out.grad = doutput;
  } else {
    out.grad += doutput;
  }
  finish_backward(output.id, retain_graph);
}

void Tape::backward(Var output, arma::mat&& doutput, bool retain_graph) {
  Node& out = start_backward(output, doutput);
  if (out.grad.n_elem != out.value.n_elem) {
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
  for (Node& n : nodes_) {
    for (std::vector<std::size_t>* ids : {&n.inputs, &n.saved}) {
      if (ids->capacity() == 0) continue;
      ids->clear();
      spare_ids_.push_back(std::move(*ids));
    }
  }
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
