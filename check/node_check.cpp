#include "check/node_check.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <map>
#include <random>
#include <sstream>

#include "autograd/custom_op.h"
#include "ops/layernorm.h"
#include "ops/ops.h"

namespace ag {

namespace {

// A node's forward on plain matrices, ready to be run on nudged inputs.
using Forward = std::function<arma::mat(const Inputs& inputs)>;
// Builds a node's forward from the node and its input values (some ops read a constant back).
using ReplayFactory = std::function<Forward(const Node& node, const Inputs& inputs)>;

Forward on_fresh_tape(const TapeFunction& op) {
  return [op](const Inputs& inputs) {
    Tape tape;
    NoGrad no_grad(tape);
    std::vector<Var> vars;
    for (const arma::mat& m : inputs) vars.push_back(tape.constant(m));
    return arma::mat(op(tape, vars).value());
  };
}

ReplayFactory simple(TapeFunction op) {
  return [op](const Node&, const Inputs&) { return on_fresh_tape(op); };
}

// Ops recorded with a constant (y = x + c, y = c x, y = x^p, a fused norm's
// eps) replay with the value the node kept as its attribute.
template <class Op>
ReplayFactory with_attribute(const char* name, Op op) {
  return [name, op](const Node& node, const Inputs&) -> Forward {
    const double value = attribute(node, name);
    return on_fresh_tape([op, value](Tape&, const std::vector<Var>& v) { return op(v, value); });
  };
}

std::map<std::string, ReplayFactory> builtin_replays() {
  using V = const std::vector<Var>&;
  std::map<std::string, ReplayFactory> r;
  r["add"] = simple([](Tape&, V v) { return add(v[0], v[1]); });
  r["sub"] = simple([](Tape&, V v) { return sub(v[0], v[1]); });
  r["mul"] = simple([](Tape&, V v) { return mul(v[0], v[1]); });
  r["div"] = simple([](Tape&, V v) { return div(v[0], v[1]); });
  r["matmul"] = simple([](Tape&, V v) { return matmul(v[0], v[1]); });
  r["neg"] = simple([](Tape&, V v) { return neg(v[0]); });
  r["exp"] = simple([](Tape&, V v) { return exp(v[0]); });
  r["log"] = simple([](Tape&, V v) { return log(v[0]); });
  r["sqrt"] = simple([](Tape&, V v) { return sqrt(v[0]); });
  r["square"] = simple([](Tape&, V v) { return square(v[0]); });
  r["tanh"] = simple([](Tape&, V v) { return tanh(v[0]); });
  r["sigmoid"] = simple([](Tape&, V v) { return sigmoid(v[0]); });
  r["relu"] = simple([](Tape&, V v) { return relu(v[0]); });
  r["transpose"] = simple([](Tape&, V v) { return transpose(v[0]); });
  r["sum"] = simple([](Tape&, V v) { return sum(v[0]); });
  r["mean"] = simple([](Tape&, V v) { return mean(v[0]); });
  for (int d = 0; d < 2; ++d) {
    const std::string dim = "(dim=" + std::to_string(d) + ")";
    r["sum" + dim] = simple([d](Tape&, V v) { return sum(v[0], d); });
    r["mean" + dim] = simple([d](Tape&, V v) { return mean(v[0], d); });
    r["var" + dim] = simple([d](Tape&, V v) { return var(v[0], d); });
    r["var_unbiased" + dim] = simple([d](Tape&, V v) { return var(v[0], d, true); });
    r["max" + dim] = simple([d](Tape&, V v) { return max(v[0], d); });
    r["logsumexp" + dim] = simple([d](Tape&, V v) { return logsumexp(v[0], d); });
  }
  r["add_scalar"] = with_attribute("c", [](V v, double c) { return add_scalar(v[0], c); });
  r["mul_scalar"] = with_attribute("c", [](V v, double c) { return mul_scalar(v[0], c); });
  r["pow_scalar"] = with_attribute("p", [](V v, double p) { return pow_scalar(v[0], p); });
  r["layernorm_fused"] = with_attribute("eps", [](V v, double eps) { return layernorm_fused(v[0], v[1], v[2], eps); });
  r["rmsnorm_fused"] = with_attribute("eps", [](V v, double eps) { return rmsnorm_fused(v[0], v[1], eps); });
  return r;
}

std::map<std::string, ReplayFactory>& replays() {
  static std::map<std::string, ReplayFactory> table = builtin_replays();
  return table;
}

arma::mat random_weights(const arma::mat& like, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  arma::mat w(arma::size(like));
  for (double& v : w) v = u(rng);
  return w;
}

// The node's backward alone, on a scratch tape holding one leaf per input slot.
Grads analytic_grads(const Node& node, const Inputs& inputs, const arma::mat& dout) {
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

// d<w, forward(inputs)>/d inputs[k] by central differences.
arma::mat numeric_grad(const Forward& forward, Inputs inputs, std::size_t k, const arma::mat& w, double eps) {
  arma::mat g(arma::size(inputs[k]));
  for (arma::uword e = 0; e < inputs[k].n_elem; ++e) {
    const double x0 = inputs[k](e);
    inputs[k](e) = x0 + eps;
    const double plus = arma::accu(forward(inputs) % w);
    inputs[k](e) = x0 - eps;
    const double minus = arma::accu(forward(inputs) % w);
    inputs[k](e) = x0;
    g(e) = (plus - minus) / (2 * eps);
  }
  return g;
}

NodeCheck check_one(const Tape& tape, std::size_t id, const GradcheckOptions& options) {
  const Node& node = tape.node(id);
  NodeCheck c;
  c.id = id;
  c.op = node.op;
  Inputs inputs;
  for (std::size_t in : node.inputs) inputs.push_back(tape.value(in));

  Forward forward;
  if (const Function* f = custom_function(node)) {
    forward = f->forward;
  } else if (auto it = replays().find(node.op); it != replays().end()) {
    try {
      forward = it->second(node, inputs);
    } catch (const std::exception& e) {
      c.note = std::string("cannot replay: ") + e.what();
      return c;
    }
  } else {
    c.note = "no replay for op '" + node.op + "' (register_replay adds one)";
    return c;
  }

  std::mt19937_64 rng(options.seed * 7919 + id);
  const arma::mat w = random_weights(node.value, rng);
  Grads analytic;
  try {
    analytic = analytic_grads(node, inputs, w);
  } catch (const std::exception& e) {
    c.status = NodeStatus::Failed;
    c.note = std::string("its backward threw: ") + e.what();
    return c;
  }
  DiagnoseOptions diagnose_options;
  diagnose_options.atol = options.atol;
  diagnose_options.rtol = options.rtol;
  c.status = NodeStatus::Passed;
  std::vector<std::pair<std::string, std::string>> hints;  // hint -> "0, 1": one line per distinct hint
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    Diagnosis d;  // an input that needs no gradient is not checked
    if (tape.node(node.inputs[k]).requires_grad) {
      d = diagnose_gradient(analytic[k], numeric_grad(forward, inputs, k, w, options.eps), diagnose_options);
    }
    if (!d.correct()) {
      c.status = NodeStatus::Failed;
      auto it = std::find_if(hints.begin(), hints.end(), [&](const auto& h) { return h.first == d.hint; });
      if (it == hints.end()) hints.push_back({d.hint, std::to_string(k)});
      else it->second += ", " + std::to_string(k);
    }
    c.inputs.push_back(d);
  }
  for (const auto& [hint, which] : hints) {
    c.note += (c.note.empty() ? "" : " ") + std::string(which.find(',') == std::string::npos ? "input " : "inputs ") +
              which + ": " + hint;
  }
  return c;
}

}  // namespace

void register_replay(const std::string& op, ReplayFn replay) {
  replays()[op] = [replay](const Node& node, const Inputs&) {
    return on_fresh_tape([replay, node](Tape& t, const std::vector<Var>& v) { return replay(t, v, node); });
  };
}

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
