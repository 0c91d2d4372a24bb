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
  param.reset();
  is_param = false;
  requires_grad = false;
  freed = false;
}

Tape& tape_of(const char* op, Var a) {
  if (a.tape == nullptr) throw Error(std::string(op) + ": the input is an empty Var (never recorded on a tape)");
  a.check_live(op);
  a.tape->check(a, op);
  return *a.tape;
}

Tape& tape_of(const char* op, Var a, Var b) {
  Tape& t = tape_of(op, a);
  if (b.tape == nullptr)
    throw Error(std::string(op) + ": the second input is an empty Var (never recorded on a tape)");
  if (b.tape != a.tape) throw Error(std::string(op) + ": the two inputs were recorded on different tapes");
  b.check_live(op);
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
  // A node no gradient reached has gradient zero; materialise it on demand.
  if (arma::size(n.grad) != arma::size(n.value)) {
    const_cast<Node&>(n).grad.zeros(arma::size(n.value));
  }
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
    for (const Var& v : inputs) n.inputs.push_back(v.id);
    for (const Var& v : saved.inputs) n.saved.push_back(v.id);
    if (saved.output) n.saved.push_back(id);
    n.extra_saved_bytes = saved.extra_bytes;
    n.backward = std::move(backward);
  }
  return finish_node();
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

Node* Tape::gradient_target(std::size_t id, const arma::mat& g) {
  Node& n = nodes_[id];
  if (!n.requires_grad) return nullptr;
  if (arma::size(g) != arma::size(n.value)) {
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
    if (n.backward || n.freed || (n.is_param && !keep_param_grads_)) n.grad.reset();
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
    else if (n.backward) n.backward(*this, n);
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

void Tape::clear() {
  refuse_inside_backward("cleared the tape");
  nodes_.clear();
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
