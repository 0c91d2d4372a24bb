#include "page/explorer/explore.h"

#include <cstdio>
#include <map>

#include "autograd/forward.h"
#include "check/node_check.h"
#include "data/csv.h"
#include "page/explorer/json.h"
#include "page/explorer/record.h"

namespace explorer {

namespace {

std::string attributes_of(const ag::Node& n) {
  std::string s;
  for (const ag::Attribute& a : n.attributes) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%s=%g", a.name, a.value);
    s += (s.empty() ? "" : ", ") + std::string(buf);
  }
  return s;
}

NodeReport node_report(const ag::Tape& tape, const Recorded& r, std::size_t id) {
  const ag::Node& n = tape.node(id);
  NodeReport out;
  out.id = id;
  out.op = n.op;
  out.label = r.labels.count(id) ? r.labels.at(id) : "";
  out.kind = n.def ? "op" : (n.requires_grad ? "leaf" : "constant");
  out.attributes = attributes_of(n);
  out.inputs = n.inputs;
  if (n.def) out.forward = n.def->forward, out.backward = n.def->backward, out.tangent_rule = n.def->tangent;
  out.value = n.value;
  if (n.requires_grad && !n.grad_freed) out.grad = n.grad;
  return out;
}

// The backward walk, output first: each node's backward alone, on the input
// values it saw, and the running total of each input's gradient.
std::vector<BackwardStep> walk_backward(const ag::Tape& tape, std::size_t output) {
  std::vector<BackwardStep> steps;
  std::map<std::size_t, arma::mat> totals;
  for (std::size_t id = output + 1; id-- > 0;) {
    const ag::Node& n = tape.node(id);
    if (!n.backward || n.grad.is_empty()) continue;
    ag::Inputs inputs;
    for (std::size_t in : n.inputs) inputs.push_back(tape.value(in));
    const ag::Grads parts = ag::node_backward_alone(n, inputs, n.grad);
    BackwardStep step{id, {}};
    for (std::size_t k = 0; k < n.inputs.size(); ++k) {
      const std::size_t in = n.inputs[k];
      if (!tape.node(in).requires_grad) continue;
      arma::mat& total = totals[in];
      total = total.is_empty() ? parts[k] : arma::mat(total + parts[k]);
      step.parts.push_back({in, parts[k], total});
    }
    steps.push_back(std::move(step));
  }
  return steps;
}

// The direction forward mode moves a leaf along: as typed (x's shape), or by
// default 1, 2, 3, ... row by row, not ones, which LayerNorm (and anything
// shift-invariant) maps to a zero tangent.
arma::mat direction_of(const std::string& name, const arma::mat& x, const std::string& typed) {
  if (typed.find_first_not_of(" \t") == std::string::npos) {
    arma::mat v(arma::size(x));
    for (arma::uword i = 0; i < v.n_rows; ++i) {
      for (arma::uword j = 0; j < v.n_cols; ++j) v(i, j) = double(1 + i * v.n_cols + j);
    }
    return v;
  }
  arma::mat v;
  try {
    v = ag::parse_matrix(typed, "v");
  } catch (const std::exception& e) {
    throw ProgramError(1, e.what());
  }
  if (arma::size(v) != arma::size(x)) {
    throw ProgramError(1, "v: " + std::to_string(v.n_rows) + "x" + std::to_string(v.n_cols) + " numbers for " + name + ", which is " +
                              std::to_string(x.n_rows) + "x" + std::to_string(x.n_cols) + "; give one number per element (rows separated by ;)");
  }
  return v;
}

ag::Var leaf_named(const Recorded& r, const std::string& name) {
  const auto it = r.names.find(name);
  if (it == r.names.end() || std::find(r.leaves.begin(), r.leaves.end(), name) == r.leaves.end() ||
      !it->second.tape->node(it->second.id).requires_grad || it->second.tape->node(it->second.id).def) {
    std::string leaves;
    for (const std::string& l : r.leaves) leaves += (leaves.empty() ? "" : ", ") + l;
    throw ProgramError(1, "direction=" + name + ": the direction is a leaf (a name bound to a number or matrix)" +
                              (leaves.empty() ? "; this program has none" : ": " + leaves));
  }
  return it->second;
}

// H v on a tape of its own: grad(f) . v recorded by forward mode, then differentiated.
void add_hvp(const std::vector<Statement>& program, const std::string& direction, Exploration& e) {
  ag::Tape tape;
  const Recorded r = record(program, tape);
  const ag::Var x = leaf_named(r, direction);
  const ag::Var t = ag::push_tangents(r.output, {{x, tape.constant(e.v)}});
  const bool reaches = tape.node(t.id).requires_grad;
  if (reaches) tape.backward(t);
  for (NodeReport& n : e.nodes) {
    if (n.kind != "leaf") continue;
    const ag::Node& leaf = tape.node(n.id);
    n.hvp = reaches && !leaf.grad.is_empty() ? leaf.grad : arma::mat(arma::size(leaf.value), arma::fill::zeros);
  }
}

}  // namespace

Exploration explore_program(const std::string& text, const std::string& direction, const std::string& v) {
  const std::vector<Statement> program = parse_program(text);
  ag::Tape tape;
  const Recorded r = record(program, tape);
  Exploration e;
  e.output = r.output.id;
  e.output_name = r.output_name;
  e.direction = direction;
  const std::size_t primal = tape.size();
  std::vector<ag::Var> tangents;
  if (!direction.empty()) {
    std::vector<ag::Var> all;
    for (std::size_t id = 0; id < primal; ++id) all.push_back(tape.var(id));
    const ag::Var x = leaf_named(r, direction);
    e.v = direction_of(direction, x.value(), v);
    tangents = ag::push_tangents(all, {{x, tape.constant(e.v)}});
  }
  const bool reaches = tape.node(r.output.id).requires_grad;
  if (reaches && r.output.value().n_elem == 1) {
    tape.backward(r.output, true);
  } else if (reaches) {
    tape.backward(r.output, arma::mat(arma::size(r.output.value()), arma::fill::ones), true);
    e.note = r.output_name + " is " + r.output.shape() + ", not 1x1: backward starts from ones, as for sum(" + r.output_name + ")";
  } else {
    e.note = r.output_name + " depends on no leaf: no gradient flows (bind a number or matrix to a name to make a leaf)";
  }
  for (std::size_t id = 0; id < primal; ++id) e.nodes.push_back(node_report(tape, r, id));
  for (std::size_t k = 0; k < tangents.size(); ++k) e.nodes[k].tangent = tangents[k].value();
  if (reaches) e.backward = walk_backward(tape, r.output.id);
  if (!direction.empty() && r.output.value().n_elem == 1) add_hvp(program, direction, e);
  return e;
}

const NodeReport* Exploration::labelled(const std::string& name) const {
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    const std::string& l = it->label;
    for (std::size_t start = 0; start <= l.size();) {
      const std::size_t end = std::min(l.find(", ", start), l.size());
      if (l.substr(start, end - start) == name) return &*it;
      start = end + 2;
    }
  }
  return nullptr;
}

}  // namespace explorer
