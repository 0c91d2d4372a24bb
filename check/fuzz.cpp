// The random graph generator: each step a row of the op table, its inputs
// inside the row's domains. (A graph's replay and printout: fuzz_graph.cpp.)
#include "check/fuzz.h"

#include <numeric>

#include "autograd/rng.h"
#include "check/fuzz_steps.h"
#include "check/op_table.h"

namespace ag {

using namespace fuzz_detail;

namespace {

bool is_scalar(const arma::mat& m) { return m.n_rows == 1 && m.n_cols == 1; }
bool is_positive_domain(Domain d) {
  return d == Domain::Positive || d == Domain::PowerBase || d == Domain::AwayFromZero;
}

// Builds one graph step by step. Each draw appends one row of the op table
// (and, for inputs that must be positive or away from zero, the steps that
// first move a value there).
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
  int uniform(int lo, int hi) { return lo + int(rng_.below(std::uint64_t(hi - lo + 1))); }
  bool coin(double p) { return rng_.uniform() < p; }
  const arma::mat& value(int k) const { return graph_.steps[k].value; }

  void add_leaves() {
    const arma::uword n = coin(0.1) ? 1 : uniform(2, 4), d = coin(0.1) ? 1 : uniform(2, 5);
    const arma::uword m = uniform(1, 4);
    const std::vector<Shape> shapes = {{n, d}, {1, d}, {n, 1}, {1, 1}, {d, m}};
    const int count = uniform(2, 4);
    for (int k = 0; k < count; ++k) {
      const Shape s = shapes[k == 0 ? 0 : uniform(0, int(shapes.size()) - 1)];
      graph_.steps.push_back({"leaf", {}, {}, rng_.uniform(s.rows, s.cols, -2.0, 2.0)});
    }
  }

  // Binary ops weigh 3, so broadcasting and reuse come up often; reductions
  // along a dim 0.5 each (there are 12); the other rows 1, custom ops 2.
  std::string pick_op_name() {
    std::vector<std::string> names;
    std::vector<double> weights;
    for (const OpRow& row : op_table()) {
      names.push_back(row.name);
      weights.push_back(row.inputs.size() == 2 ? 3.0 : row.dim >= 0 && row.shapes == Shapes::One ? 0.5 : 1.0);
    }
    for (const FuzzCustomOp& c : options_.custom_ops) {
      names.push_back(c.name);
      weights.push_back(2.0);
    }
    double r = rng_.uniform(0.0, std::accumulate(weights.begin(), weights.end(), 0.0));
    for (std::size_t k = 0; k + 1 < names.size(); ++k) {
      if ((r -= weights[k]) < 0) return names[k];
    }
    return names.back();
  }

  std::vector<double> draw_constants(const OpRow& row) {
    std::vector<double> values;
    for (const Constant& c : row.constants) {
      values.push_back(c.choices.empty() ? c.value : c.choices[uniform(0, int(c.choices.size()) - 1)]);
    }
    return values;
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
      if (!is_scalar(value(int(k)))) ++to_reduce;
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
        const arma::mat& v = value(int(k));
        if (!ok(v) || (pass == 0 && want_large && v.n_elem == 1)) continue;
        all.push_back(int(k));
        if (uses[k] == 0 && graph_.steps[k].op != "leaf") unused.push_back(int(k));
      }
    }
    const std::vector<int>& from = !unused.empty() && coin(0.5) ? unused : all;
    return from.empty() ? -1 : from[uniform(0, int(from.size()) - 1)];
  }

  // Appends a step; -1 when its input is outside the domain or its value is too large.
  int push(std::string op, std::vector<int> args, std::vector<double> constants = {},
           double limit = kMaxMagnitude) {
    for (int a : args) {
      if (a < 0) return -1;
    }
    FuzzStep s{std::move(op), std::move(args), std::move(constants), {}};
    if (!evaluate_step(s, graph_.steps, graph_.custom_ops)) return -1;
    if (!s.value.is_empty() && arma::abs(s.value).max() > limit) return -1;
    graph_.steps.push_back(std::move(s));
    return int(graph_.steps.size()) - 1;
  }

  // x itself when already >= 0.3, else exp(x), square(x) + 0.5 or sigmoid(x) + 0.5.
  int positive_version(int k) {
    if (k < 0) return -1;
    const arma::mat& x = value(k);
    if (x.min() >= 0.3 && coin(0.5)) return k;
    const bool exp_ok = x.min() >= -1.2 && x.max() <= 4.6;
    const bool square_ok = arma::abs(x).max() <= 9.9;
    const int choice = uniform(0, 2);
    if (choice == 0 && exp_ok) return push("exp", {k});
    if (choice <= 1 && square_ok) return push("add_scalar", {push("square", {k})}, {0.5});
    return push("add_scalar", {push("sigmoid", {k})}, {0.5});
  }

  // Step k as input `slot` of `row`: a value outside a positive domain (log's,
  // a divisor's) is first moved into it; push refuses any other misfit.
  int into_domain(const OpRow& row, std::size_t slot, int k, const std::vector<double>& constants) {
    if (k < 0 || !is_positive_domain(row.inputs[slot])) return k;
    const bool divisor = row.inputs[slot] == Domain::AwayFromZero;
    if (accepts(row, slot, value(k), constants) && (divisor || coin(0.5))) return k;
    return positive_version(k);
  }

  // A first operand that is, or can be moved, inside input 0's domain.
  int pick_first(const OpRow& row, const std::vector<double>& constants) {
    if (is_positive_domain(row.inputs[0])) return into_domain(row, 0, pick(any_value, true), constants);
    return pick([&](const arma::mat& m) { return accepts(row, 0, m, constants); }, true);
  }

  static bool any_value(const arma::mat&) { return true; }

  bool draw_op(const std::string& name) {
    const OpRow* row = find_op(name);
    if (row == nullptr) return push(name, {pick(any_value, true)}) >= 0;  // a custom op
    const std::vector<double> constants = draw_constants(*row);
    switch (row->shapes) {
      case Shapes::One: return push(name, {pick_first(*row, constants)}, constants) >= 0;
      case Shapes::Broadcast: return draw_broadcast(*row, constants);
      case Shapes::Matmul: return draw_matmul(*row);
      case Shapes::PerFeature: return draw_per_feature(*row, constants);
    }
    return false;
  }

  bool draw_broadcast(const OpRow& row, const std::vector<double>& constants) {
    const int a = pick_first(row, constants);
    if (a < 0) return false;
    const arma::mat& x = value(a);
    const bool other_shape = coin(0.5);  // half the time, insist on broadcasting
    auto fits = [&x](const arma::mat& m) {
      return (m.n_rows == x.n_rows || m.n_rows == 1 || x.n_rows == 1) &&
             (m.n_cols == x.n_cols || m.n_cols == 1 || x.n_cols == 1);
    };
    int b = pick([&](const arma::mat& m) { return fits(m) && (!other_shape || arma::size(m) != arma::size(x)); });
    if (b < 0) b = pick(fits);
    return push(row.name, {a, into_domain(row, 1, b, constants)}, constants) >= 0;
  }

  bool draw_matmul(const OpRow& row) {
    const int a = pick(any_value, true);
    if (a < 0) return false;
    const arma::uword inner = value(a).n_cols;
    int b = pick([inner](const arma::mat& m) { return m.n_rows == inner; });
    if (b < 0 || coin(0.3)) b = push("transpose", {pick([inner](const arma::mat& m) { return m.n_cols == inner; })});
    return push(row.name, {a, b}) >= 0;
  }

  // x inside its domain, then a 1 x (x's columns) value for each parameter (gamma, beta).
  bool draw_per_feature(const OpRow& row, const std::vector<double>& constants) {
    std::vector<int> args = {pick_first(row, constants)};
    if (args[0] < 0) return false;
    const arma::uword cols = value(args[0]).n_cols;
    for (std::size_t k = 1; k < row.inputs.size(); ++k) {
      args.push_back(pick([&](const arma::mat& m) {
        return m.n_rows == 1 && m.n_cols == cols && accepts(row, k, m, constants);
      }));
    }
    return push(row.name, std::move(args), constants) >= 0;
  }

  // Reduces every value no step reads to 1x1 and adds them up: every op reaches the output.
  void finish() {
    const std::vector<int> uses = use_counts();
    std::vector<int> outputs;
    for (std::size_t k = 0; k < uses.size(); ++k) {
      if (uses[k] > 0 || graph_.steps[k].op == "leaf") continue;
      const int k_int = int(k);
      outputs.push_back(is_scalar(value(k_int)) ? k_int : push("mean", {k_int}));
    }
    if (outputs.empty()) outputs.push_back(push("mean", {0}));
    int total = outputs[0];
    for (std::size_t k = 1; k < outputs.size(); ++k) total = push("add", {total, outputs[k]}, {}, kMaxValue);
    (void)total;
  }

  Rng rng_;
  const FuzzOptions& options_;
  FuzzGraph graph_;
};

}  // namespace

FuzzGraph random_graph(std::uint64_t seed, const FuzzOptions& options) {
  return Generator(seed, options).make();
}

}  // namespace ag
