#include "check/node_check.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "autograd/custom_op.h"
#include "autograd/rng.h"
#include "check/op_table.h"

namespace ag {

namespace {

// A node's forward on plain matrices, ready to be run on nudged inputs.
using Forward = std::function<arma::mat(const Inputs& inputs)>;

// The op-table row applied on a fresh tape to constant inputs, with the
// constants the node was recorded with (add_scalar's c, layernorm_fused's eps).
Forward replay(const OpRow& row, const Node& node) {
  std::vector<double> constants;
  for (const Constant& c : row.constants) constants.push_back(attribute(node, c.name));
  return [&row, constants](const Inputs& inputs) {
    Tape tape;
    NoGrad no_grad(tape);
    std::vector<Var> vars;
    for (const arma::mat& m : inputs) vars.push_back(tape.constant(m));
    return arma::mat(row.apply(vars, constants).value());
  };
}

}  // namespace

Grads node_backward_alone(const Node& node, const Inputs& inputs, const arma::mat& dout) {
  Tape scratch;
  std::vector<Var> leaves;
  for (const arma::mat& m : inputs) leaves.push_back(scratch.leaf(m));
  Node copy = node;
  for (std::size_t k = 0; k < inputs.size(); ++k) copy.inputs[k] = leaves[k].id;
  copy.grad = dout;
  copy.backward(scratch, copy);
  Grads grads;
  for (const Var& v : leaves) grads.push_back(v.grad());
  return grads;
}

namespace {

// The node's forward as a function of its inputs: its ag::Function's, or its op-table
// row replayed with the node's constants. Empty, with `note` saying why, when there is none.
Forward forward_of(const Node& node, std::string& note) {
  if (const Function* f = custom_function(node)) return f->forward;
  if (const OpRow* row = find_op(node.op)) {
    try {
      return replay(*row, node);
    } catch (const Error& e) {
      note = std::string("cannot replay: ") + e.what();
      return {};
    }
  }
  note = "no op-table row for '" + node.op + "' and no ag::Function behind it";
  return {};
}

// One line per distinct hint, naming the inputs it is about: "inputs 0, 1: ...".
std::string hint_note(const std::vector<Diagnosis>& inputs) {
  std::vector<std::pair<std::string, std::string>> hints;  // hint -> "0, 1"
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    if (inputs[k].correct()) continue;
    auto it = std::find_if(hints.begin(), hints.end(), [&](const auto& h) { return h.first == inputs[k].hint; });
    if (it == hints.end()) hints.push_back({inputs[k].hint, std::to_string(k)});
    else it->second += ", " + std::to_string(k);
  }
  std::string note;
  for (const auto& [hint, which] : hints) {
    note += (note.empty() ? "" : " ") + std::string(which.find(',') == std::string::npos ? "input " : "inputs ") + which +
            ": " + hint;
  }
  return note;
}

NodeCheck check_one(const Tape& tape, std::size_t id, const GradcheckOptions& options) {
  const Node& node = tape.node(id);
  NodeCheck c;
  c.id = id;
  c.op = node.op;
  const Forward forward = forward_of(node, c.note);
  if (!forward) return c;
  Inputs inputs;
  for (std::size_t in : node.inputs) inputs.push_back(tape.value(in));

  // <w, forward> with fixed random weights w: one backward (dout = w) checks every input.
  Rng rng(options.seed * 7919 + id);
  const arma::mat w = rng.uniform(node.value.n_rows, node.value.n_cols, -1.0, 1.0);
  const ScalarFunction weighted = [&](const Inputs& x) { return arma::accu(forward(x) % w); };
  Grads analytic;
  try {
    analytic = node_backward_alone(node, inputs, w);
  } catch (const std::exception& e) {
    c.status = NodeStatus::Failed;
    c.note = std::string("its backward threw: ") + e.what();
    return c;
  }
  DiagnoseOptions diagnose_options;
  diagnose_options.atol = options.atol;
  diagnose_options.rtol = options.rtol;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    Diagnosis d;  // an input that needs no gradient is not checked
    if (tape.node(node.inputs[k]).requires_grad) {
      d = diagnose_gradient(analytic[k], numeric_gradient(weighted, inputs, k, options.eps), diagnose_options);
    }
    c.inputs.push_back(d);
  }
  c.note = hint_note(c.inputs);
  const bool all_correct = std::all_of(c.inputs.begin(), c.inputs.end(), [](const Diagnosis& d) { return d.correct(); });
  c.status = all_correct ? NodeStatus::Passed : NodeStatus::Failed;
  return c;
}

}  // namespace

NodeCheckReport check_nodes(const Tape& tape, const GradcheckOptions& options) {
  NodeCheckReport report;
  for (std::size_t id = 0; id < tape.size(); ++id) {
    const Node& node = tape.node(id);
    if (!node.backward && !node.freed) continue;  // leaves, constants
    NodeCheck c;
    if (node.freed) {
      c.id = id;
      c.op = node.op;
      c.note = "its backward was released by an earlier backward (use retain_graph=true)";
    } else {
      c = check_one(tape, id, options);
    }
    if (c.status == NodeStatus::Skipped) ++report.skipped;
    if (c.status == NodeStatus::Failed && !report.first_wrong) report.first_wrong = id;
    report.nodes.push_back(std::move(c));
  }
  return report;
}

std::string NodeCheckReport::summary() const {
  std::ostringstream os;
  os << std::left << std::setw(5) << "id" << std::setw(22) << "op" << std::setw(9) << "result" << "note\n";
  for (const NodeCheck& c : nodes) {
    const char* result = c.status == NodeStatus::Passed ? "pass" : c.status == NodeStatus::Failed ? "FAIL" : "skipped";
    os << std::setw(5) << c.id << std::setw(22) << c.op << std::setw(9) << result << c.note << "\n";
  }
  if (first_wrong) {
    for (const NodeCheck& c : nodes) {
      if (c.id == *first_wrong) os << "first wrong node: " << c.id << " '" << c.op << "'\n";
    }
  } else {
    os << "every checked node's backward agrees with finite differences"
       << (skipped ? " (" + std::to_string(skipped) + " skipped)" : std::string()) << "\n";
  }
  return os.str();
}

}  // namespace ag
