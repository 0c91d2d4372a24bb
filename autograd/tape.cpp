#include "autograd/tape.h"

#include <cstring>
#include <mutex>
#include <sstream>

#include "autograd/memory.h"
#include "autograd/tape_token.h"

namespace ag {

std::string shape_str(arma::uword rows, arma::uword cols) {
  return std::to_string(rows) + "x" + std::to_string(cols);
}
std::string shape_str(const arma::mat& m) { return shape_str(m.n_rows, m.n_cols); }

void Node::reset() {
  op.clear();
  inputs.clear();
  saved.clear();
  extra_saved_bytes = 0;
  attributes.clear();
  value.reset();
  grad.reset();
  backward = nullptr;
  def = nullptr;
  jvp = nullptr;
  tangent = false;
  param.reset();
  is_param = false;
  requires_grad = false;
  freed = false;
  grad_freed = false;
}

Tape& tape_of(const char* op, Var a) {
  if (a.tape == nullptr) throw Error(std::string(op) + ": the input is an empty Var (never recorded on a tape)");
  a.check_live(op);  // the tape, its generation and the node: all tape.check(a) would
  return *a.tape;
}

Tape& tape_of(const char* op, Var a, Var b) {
  Tape& t = tape_of(op, a);
  if (b.tape == nullptr)
    throw Error(std::string(op) + ": the second input is an empty Var (never recorded on a tape)");
  if (b.tape != a.tape) throw Error(std::string(op) + ": the two inputs were recorded on different tapes");
  b.check_live(op);
  return t;
}

std::string node_name(const Node& n, std::size_t id) {
  return "'" + n.op + (n.tangent ? "' (tangent node " : "' (node ") + std::to_string(id) + ", " + shape_str(n.value) + ")";
}

void Tape::check(const Var& v, const char* what) const {
  if (v.tape != this)
    throw Error(std::string(what) + ": the value belongs to another tape");
  if (v.generation == generation_) {
    if (v.id < nodes_.size()) return;
    throw Error(std::string(what) + ": node " + std::to_string(v.id) + " is past the end of its tape of " +
                std::to_string(nodes_.size()) + " nodes (a Var made by hand, not by the tape)");
  }
  if (kept_by_rewinds(v.generation, v.id)) return;
  for (const Rewound& r : rewound_) {
    if (v.generation >= r.first && v.generation <= r.last) {
      throw Error(std::string(what) + ": the value (node " + std::to_string(v.id) +
                  ") was dropped by a rewind() of its tape since it was recorded");
    }
  }
  throw Error(std::string(what) + ": the value belongs to a tape that was cleared since it was recorded");
}

const Node& Tape::node(std::size_t id) const {
  if (id >= nodes_.size()) {
    throw Error("node: id " + std::to_string(id) + " is past the end of a tape of " +
                std::to_string(nodes_.size()) + " nodes");
  }
  return nodes_[id];
}

const arma::mat& Tape::value(Var v) const {
  check(v, "value");
  return nodes_[v.id].value;
}

const arma::mat& Tape::grad(Var v) const {
  check(v, "grad");
  const Node& n = nodes_[v.id];
  if (n.grad_freed) {
    throw Error("grad: the gradient of " + node_name(n, v.id) +
                " was freed once its backward ran (the tape keeps only leaf and parameter gradients: "
                "keep_intermediate_grads(false)); call tape.keep_intermediate_grads(true) before backward to read it");
  }
  // A node no gradient reached has gradient zero; materialise it on demand (Node::grad is mutable for this).
  if (arma::size(n.grad) != arma::size(n.value)) n.grad.zeros(arma::size(n.value));
  return n.grad;
}

// Nodes are built in place at the end of nodes_: a Node is large (two
// matrices, a closure, a name), and the per-op cost of the tape is mostly
// moving and allocating, not arithmetic.
Node& Tape::new_node(std::string op, arma::mat value) {
  refuse_inside_backward("recorded", op);
  Node& n = nodes_.emplace_back();
  n.op = std::move(op);
  n.value = std::move(value);
  n.tangent = recording_tangents_;
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
  return Var{this, nodes_.size() - 1, generation_, token_};
}

// A closure that changes the tape it is walked on would invalidate the walk
// (new nodes it never visits, nodes it visits that no longer exist).
void Tape::refuse_inside_backward(const char* what, const std::string& op) const {
  if (!in_backward_) return;
  throw Error("backward of " + node_name(nodes_[current_node_], current_node_) + " " + what +
              (op.empty() ? std::string() : " a node '" + op + "'") +
              " on the tape it is walked on; a backward closure may only accumulate into its inputs' "
              "gradients (tape.accumulate(self.inputs[k], ...)), computing with Armadillo on saved values");
}

Var Tape::leaf(arma::mat value, std::string name) {
  new_node(std::move(name), std::move(value)).requires_grad = true;
  return finish_node();
}

Var Tape::leaf(double value, std::string name) { return leaf(arma::mat(1, 1, arma::fill::value(value)), std::move(name)); }

namespace {
// Armadillo builds a matrix from rows in braces; checked here so a ragged list names itself.
arma::mat from_rows(std::initializer_list<std::initializer_list<double>> rows, const char* what) {
  const std::size_t cols = rows.size() == 0 ? 0 : rows.begin()->size();
  arma::mat m(rows.size(), cols);
  arma::uword r = 0;
  for (const std::initializer_list<double>& row : rows) {
    if (row.size() != cols) {
      throw Error(std::string(what) + ": row " + std::to_string(r) + " has " + std::to_string(row.size()) +
                  " values, row 0 has " + std::to_string(cols) + " (every row needs the same number)");
    }
    arma::uword c = 0;
    for (double v : row) m(r, c++) = v;
    ++r;
  }
  return m;
}
}  // namespace

Var Tape::leaf(std::initializer_list<std::initializer_list<double>> rows, std::string name) {
  return leaf(from_rows(rows, "leaf"), std::move(name));
}

Var Tape::constant(std::initializer_list<std::initializer_list<double>> rows, std::string name) {
  return constant(from_rows(rows, "constant"), std::move(name));
}

Var Tape::constant(arma::mat value, std::string name) {
  new_node(std::move(name), std::move(value));
  return finish_node();
}

Var Tape::constant(double value, std::string name) {
  return constant(arma::mat(1, 1, arma::fill::value(value)), std::move(name));
}

Var Tape::param(Parameter& p) {
  if (arma::size(p.grad()) != arma::size(p.value())) {
    throw Error("param: parameter '" + p.name() + "' is " + shape_str(p.value()) + " but its gradient is " +
                shape_str(p.grad()) + "; after reshaping a parameter call zero_grad() to reshape its gradient");
  }
  Node& n = new_node("param:" + p.name(), p.value());
  n.param = p.handle();
  n.is_param = true;
  n.requires_grad = grad_enabled_;
  return finish_node();
}

Var Tape::record(std::string op, const std::vector<Var>& inputs, arma::mat value,
                 BackwardFn backward, const Saved& saved, JvpFn jvp) {
  bool any = false;
  for (const Var& v : inputs) {
    check(v, op.c_str());
    any = any || nodes_[v.id].requires_grad;
  }
  const std::size_t id = nodes_.size();
  Node& n = new_node(std::move(op), std::move(value));
  // Forward mode walks inputs whatever reverse mode needs: the ids stay.
  for (const Var& v : inputs) n.inputs.push_back(v.id);
  n.jvp = std::move(jvp);
  // Nothing to differentiate (constants only, or no_grad): keep no backward and nothing saved.
  if (any && grad_enabled_) {
    n.requires_grad = true;
    for (const Var& v : saved.inputs) n.saved.push_back(v.id);
    if (saved.output) n.saved.push_back(id);
    n.extra_saved_bytes = saved.extra_bytes;
    n.backward = std::move(backward);
  }
  return finish_node();
}

Var Tape::record(const OpDef& def, const std::vector<Var>& inputs, arma::mat value,
                 BackwardFn backward, const Saved& saved, JvpFn jvp) {
  if (def.arity >= 0 && inputs.size() != static_cast<std::size_t>(def.arity)) {
    throw Error(std::string(def.name) + ": recorded with " + std::to_string(inputs.size()) +
                " inputs; the op takes " + std::to_string(def.arity));
  }
  Var v = record(def.name, inputs, std::move(value), std::move(backward), saved, jvp ? std::move(jvp) : def.jvp);
  nodes_[v.id].def = &def;
  return v;
}

Var Tape::var(std::size_t id) const {
  node(id);  // throws for an id past the end
  return Var{const_cast<Tape*>(this), id, generation_, token_};
}

void Tape::set_attribute(Var v, const char* name, double value) {
  refuse_inside_backward("set an attribute");
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

void Tape::clear() {
  refuse_inside_backward("cleared the tape");
  refuse_inside_jvp("clear");
  nodes_.clear();
  rewound_.clear();
  generation_ = next_generation();
  token_->generation.store(generation_, std::memory_order_release);
  back_heap_with_huge_pages();  // what this step grew, the next ones reuse (autograd/memory.h)
}

std::size_t Tape::saved_bytes() const { return saved_bytes_since(0); }

std::size_t Tape::saved_bytes_since(std::size_t first) const {
  std::vector<bool> counted(nodes_.size(), false);
  std::size_t bytes = 0;
  for (std::size_t i = first; i < nodes_.size(); ++i) {
    const Node& n = nodes_[i];
    if (!n.backward) continue;
    bytes += n.extra_saved_bytes;
    for (std::size_t id : n.saved) {
      if (id < first || counted[id]) continue;
      counted[id] = true;
      bytes += nodes_[id].value.n_elem * sizeof(double);
    }
  }
  return bytes;
}

std::size_t Tape::node_saved_bytes(std::size_t id) const {
  const Node& n = node(id);
  if (!n.backward) return 0;
  std::size_t bytes = n.extra_saved_bytes;
  for (std::size_t s : n.saved) bytes += nodes_[s].value.n_elem * sizeof(double);
  return bytes;
}

}  // namespace ag
