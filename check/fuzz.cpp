// The random graph generator and the graph's replay and printout.
#include "check/fuzz.h"

#include <iomanip>
#include <random>
#include <sstream>

#include "check/fuzz_steps.h"

namespace ag {

using namespace fuzz_detail;

namespace {

bool is_scalar(const arma::mat& m) { return m.n_rows == 1 && m.n_cols == 1; }

// Builds one graph step by step. Each draw appends one op (and, for log,
// sqrt, pow and div, the steps that first move its input into the domain).
class Generator {
 public:
  Generator(std::uint64_t seed, const FuzzOptions& options) : rng_(seed), options_(options) {
    graph_.seed = seed;
    graph_.custom_ops = options.custom_ops;
  }

  FuzzGraph make() {
    add_leaves();
    const int target = uniform(options_.min_nodes, options_.max_nodes);
    for (int attempt = 0; attempt < 400 && graph_.op_count() + final_cost() < target; ++attempt) {
      const std::size_t before = graph_.steps.size();
      const bool ok = draw_op(pick_op_name());
      if (!ok || graph_.op_count() + final_cost() > options_.max_nodes) graph_.steps.resize(before);
    }
    finish();
    return std::move(graph_);
  }

 private:
  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  double real(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng_); }
  bool coin(double p) { return real(0, 1) < p; }

  void add_leaves() {
    const arma::uword n = coin(0.1) ? 1 : uniform(2, 4), d = coin(0.1) ? 1 : uniform(2, 5);
    const arma::uword m = uniform(1, 4);
    const std::vector<std::pair<arma::uword, arma::uword>> shapes = {{n, d}, {1, d}, {n, 1}, {1, 1}, {d, m}};
    const int count = uniform(2, 4);
    for (int k = 0; k < count; ++k) {
      const auto& [rows, cols] = shapes[k == 0 ? 0 : uniform(0, int(shapes.size()) - 1)];
      FuzzStep leaf{"leaf", {}, 0, arma::mat(rows, cols)};
      for (double& v : leaf.value) v = real(-2, 2);
      graph_.steps.push_back(std::move(leaf));
    }
  }

  // Binary ops weigh 3, so broadcasting and reuse come up often; reductions along
  // a dim 0.5 each (there are 12); the other ops 1, custom ops 2.
  std::string pick_op_name() {
    std::vector<std::string> names;
    std::vector<double> weights;
    for (const OpDef& op : op_defs()) {
      names.push_back(op.name);
      weights.push_back(op.arity == 2 ? 3.0 : op.dim >= 0 ? 0.5 : 1.0);
    }
    for (const FuzzCustomOp& c : options_.custom_ops) {
      names.push_back(c.name);
      weights.push_back(2.0);
    }
    return names[std::discrete_distribution<std::size_t>(weights.begin(), weights.end())(rng_)];
  }

  std::vector<int> use_counts() const {
    std::vector<int> uses(graph_.steps.size(), 0);
    for (const FuzzStep& s : graph_.steps) {
      for (int a : s.args) ++uses[a];
    }
    return uses;
  }

  // Ops still needed to reduce every unused value into one 1x1 output.
  int final_cost() const {
    const std::vector<int> uses = use_counts();
    int unused = 0, to_reduce = 0;
    for (std::size_t k = 0; k < uses.size(); ++k) {
      if (uses[k] > 0 || graph_.steps[k].op == "leaf") continue;
      ++unused;
      if (!is_scalar(graph_.steps[k].value)) ++to_reduce;
    }
    return to_reduce + (unused > 0 ? unused - 1 : 0);
  }

  // An operand satisfying `ok`; half the time one no later step reads yet.
  // With `large`, mostly one with more than one element, so graphs do not
  // collapse to 1x1 after a few reductions.
  template <class Pred>
  int pick(Pred ok, bool large = false) {
    const std::vector<int> uses = use_counts();
    std::vector<int> all, unused;
    const bool want_large = large && coin(0.75);
    for (int pass = 0; pass < 2 && all.empty(); ++pass) {
      for (std::size_t k = 0; k < graph_.steps.size(); ++k) {
        const arma::mat& v = graph_.steps[k].value;
        if (!ok(v) || (pass == 0 && want_large && v.n_elem == 1)) continue;
        all.push_back(int(k));
        if (uses[k] == 0 && graph_.steps[k].op != "leaf") unused.push_back(int(k));
      }
    }
    const std::vector<int>& from = !unused.empty() && coin(0.5) ? unused : all;
    return from.empty() ? -1 : from[uniform(0, int(from.size()) - 1)];
  }

  // Appends a step; -1 when its input is outside the domain or its value is too large.
  int push(std::string op, std::vector<int> args, double constant = 0, double limit = kMaxMagnitude) {
    for (int a : args) {
      if (a < 0) return -1;
    }
    FuzzStep s{std::move(op), std::move(args), constant, {}};
    if (!evaluate_step(s, graph_.steps, graph_.custom_ops)) return -1;
    if (arma::abs(s.value).max() > limit) return -1;
    graph_.steps.push_back(std::move(s));
    return int(graph_.steps.size()) - 1;
  }

  // x itself when already >= 0.3, else exp(x), square(x) + 0.5 or sigmoid(x) + 0.5.
  int positive_version(int k) {
    if (k < 0) return -1;
    const arma::mat& x = graph_.steps[k].value;
    if (x.min() >= 0.3 && coin(0.5)) return k;
    const bool exp_ok = x.min() >= -1.2 && x.max() <= 4.6;
    const bool square_ok = arma::abs(x).max() <= 9.9;
    const int choice = uniform(0, 2);
    if (choice == 0 && exp_ok) return push("exp", {k});
    if (choice <= 1 && square_ok) return push("add_scalar", {push("square", {k})}, 0.5);
    return push("add_scalar", {push("sigmoid", {k})}, 0.5);
  }

  bool draw_op(const std::string& name) {
    const OpDef* op = find_op(name);
    auto any = [](const arma::mat&) { return true; };
    if (op == nullptr) return push(name, {pick(any, true)}) >= 0;  // a custom op
    if (name == "matmul") {
      const int a = pick(any, true);
      if (a < 0) return false;
      const arma::uword inner = graph_.steps[a].value.n_cols;
      int b = pick([inner](const arma::mat& m) { return m.n_rows == inner; });
      if (b < 0 || coin(0.3)) b = push("transpose", {pick([inner](const arma::mat& m) { return m.n_cols == inner; })});
      return push("matmul", {a, b}) >= 0;
    }
    if (op->arity == 2) {
      const int a = pick(any, true);
      if (a < 0) return false;
      const arma::mat& x = graph_.steps[a].value;
      const bool other_shape = coin(0.5);  // half the time, insist on broadcasting
      auto fits = [&x](const arma::mat& m) {
        return (m.n_rows == x.n_rows || m.n_rows == 1 || x.n_rows == 1) &&
               (m.n_cols == x.n_cols || m.n_cols == 1 || x.n_cols == 1);
      };
      int b = pick([&](const arma::mat& m) { return fits(m) && (!other_shape || arma::size(m) != arma::size(x)); });
      if (b < 0) b = pick(fits);
      if (name == "div" && b >= 0 && arma::abs(graph_.steps[b].value).min() < 0.3) b = positive_version(b);
      return push(name, {a, b}) >= 0;
    }
    if (name == "add_scalar") return push(name, {pick(any, true)}, real(-1, 1)) >= 0;
    if (name == "mul_scalar") return push(name, {pick(any, true)}, real(-2, 2)) >= 0;
    if (name == "pow_scalar") {
      const double p = std::vector<double>{2, 3, 0.5, 1.5, -1, -0.5}[uniform(0, 5)];
      const int a = pick(any, true);
      return push(name, {p == 2 || p == 3 ? a : positive_version(a)}, p) >= 0;
    }
    if (name == "log" || name == "sqrt") return push(name, {positive_version(pick(any, true))}) >= 0;
    return push(name, {pick(any, true)}) >= 0;  // exp, relu, max: push refuses inputs out of domain
  }

  // Reduces every value no step reads to 1x1 and adds them up: every op reaches the output.
  void finish() {
    const std::vector<int> uses = use_counts();
    std::vector<int> outputs;
    for (std::size_t k = 0; k < uses.size(); ++k) {
      if (uses[k] > 0 || graph_.steps[k].op == "leaf") continue;
      const int k_int = int(k);
      outputs.push_back(is_scalar(graph_.steps[k].value) ? k_int : push("mean", {k_int}));
    }
    if (outputs.empty()) outputs.push_back(push("mean", {0}));
    int total = outputs[0];
    for (std::size_t k = 1; k < outputs.size(); ++k) total = push("add", {total, outputs[k]}, 0, kMaxValue);
    (void)total;
  }

  std::mt19937_64 rng_;
  const FuzzOptions& options_;
  FuzzGraph graph_;
};

}  // namespace

FuzzGraph random_graph(std::uint64_t seed, const FuzzOptions& options) {
  return Generator(seed, options).make();
}

const std::vector<std::string>& fuzz_op_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const OpDef& op : op_defs()) v.push_back(op.name);
    return v;
  }();
  return names;
}

Var FuzzGraph::run(Tape& tape, const std::vector<Var>& leaves) const {
  (void)tape;  // the ops record on the tape the leaves live on
  std::vector<Var> values;
  std::size_t next_leaf = 0;
  for (const FuzzStep& s : steps) {
    if (s.op == "leaf") {
      if (next_leaf >= leaves.size()) throw Error("fuzz: the graph has more leaves than the inputs given");
      values.push_back(leaves[next_leaf++]);
      continue;
    }
    std::vector<Var> args;
    for (int a : s.args) args.push_back(values.at(a));
    values.push_back(apply_step(s, args, custom_ops));
  }
  if (values.empty()) throw Error("fuzz: the graph is empty");
  return values.back();
}

std::vector<arma::mat> FuzzGraph::leaf_values() const {
  std::vector<arma::mat> v;
  for (const FuzzStep& s : steps) {
    if (s.op == "leaf") v.push_back(s.value);
  }
  return v;
}

int FuzzGraph::op_count() const {
  int n = 0;
  for (const FuzzStep& s : steps) n += s.op == "leaf" ? 0 : 1;
  return n;
}

namespace {
// "[1.2, -0.5; 0.3, 2]": the matrix literal the CLI reads, rows separated by ';'.
std::string literal(const arma::mat& m) {
  std::ostringstream os;
  os << std::setprecision(4) << "[";
  for (arma::uword r = 0; r < m.n_rows; ++r) {
    for (arma::uword c = 0; c < m.n_cols; ++c) os << (c ? ", " : "") << m(r, c);
    os << (r + 1 < m.n_rows ? "; " : "]");
  }
  return os.str();
}
}  // namespace

std::string FuzzGraph::describe() const {
  std::ostringstream os;
  const std::size_t leaves = steps.size() - op_count();
  os << "graph from seed " << seed << ": " << leaves << (leaves == 1 ? " leaf, " : " leaves, ") << op_count()
     << (op_count() == 1 ? " op\n" : " ops\n");
  for (std::size_t k = 0; k < steps.size(); ++k) {
    const FuzzStep& s = steps[k];
    std::string call = s.op;
    if (s.op != "leaf") {
      call += "(";
      for (std::size_t i = 0; i < s.args.size(); ++i) call += (i ? ", v" : "v") + std::to_string(s.args[i]);
      if (s.op == "add_scalar" || s.op == "mul_scalar" || s.op == "pow_scalar") {
        std::ostringstream c;
        c << std::setprecision(4) << s.constant;
        call += ", " + c.str();
      }
      call += ")";
    }
    os << "  v" << std::left << std::setw(3) << k << " = " << std::setw(28) << call << shape_str(s.value);
    if (s.op == "leaf") os << "  " << (s.value.n_elem <= 24 ? literal(s.value) : "(values not shown)");
    os << "\n";
  }
  os << "  output: v" << (steps.empty() ? 0 : steps.size() - 1) << "\n";
  return os.str();
}

}  // namespace ag
