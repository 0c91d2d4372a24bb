// Checking fuzz graphs against finite differences, and shrinking a failing one.
#include <sstream>
#include <string>
#include <utility>

#include "check/fuzz.h"
#include "check/fuzz_steps.h"

namespace ag {

using namespace fuzz_detail;

FuzzCheck check_graph(const FuzzGraph& graph, const GradcheckOptions& options) {
  FuzzCheck check;
  std::vector<std::string> names;
  for (std::size_t k = 0; k < graph.steps.size(); ++k) {
    if (graph.steps[k].op == "leaf") names.push_back("v" + std::to_string(k));
  }
  try {
    const TapeFunction f = [&graph](Tape& tape, const std::vector<Var>& leaves) {
      tape.set_anomaly_mode(true);  // a NaN stops at the op that made it
      return graph.run(tape, leaves);
    };
    const GradcheckReport report = gradcheck(f, graph.leaf_values(), options, names);
    check.passed = report.passed;
    if (!report.passed) check.message = report.summary();
  } catch (const std::exception& e) {
    check.passed = false;
    check.message = std::string("exception: ") + e.what() + "\n";
  }
  return check;
}

bool graph_is_valid(const FuzzGraph& graph) {
  FuzzGraph copy = graph;
  return evaluate_graph(copy);
}

namespace {

// The steps `output` depends on, renumbered, with `output` last.
FuzzGraph prune(const FuzzGraph& g, std::size_t output) {
  std::vector<bool> keep(output + 1, false);
  keep[output] = true;
  for (std::size_t k = output + 1; k-- > 0;) {
    if (!keep[k]) continue;
    for (int a : g.steps[k].args) keep[a] = true;
  }
  FuzzGraph out = g;
  out.steps.clear();
  std::vector<int> new_id(output + 1, -1);
  for (std::size_t k = 0; k <= output; ++k) {
    if (!keep[k]) continue;
    FuzzStep s = g.steps[k];
    for (int& a : s.args) a = new_id[a];
    new_id[k] = int(out.steps.size());
    out.steps.push_back(std::move(s));
  }
  return out;
}

// Every smaller graph one edit away: an earlier output, a subexpression
// replaced by a leaf holding its value, an op bypassed by its same-shaped input.
std::vector<FuzzGraph> smaller_graphs(const FuzzGraph& g) {
  std::vector<FuzzGraph> out;
  const std::size_t last = g.steps.size() - 1;
  for (std::size_t k = 0; k < last; ++k) {
    if (g.steps[k].op != "leaf") out.push_back(prune(g, k));
  }
  for (std::size_t k = 0; k <= last; ++k) {
    if (g.steps[k].op == "leaf") continue;
    FuzzGraph h = g;
    h.steps[k].op = "leaf";
    h.steps[k].args.clear();
    out.push_back(prune(h, last));
  }
  for (std::size_t k = 0; k < last; ++k) {
    for (int a : g.steps[k].args) {
      if (arma::size(g.steps[a].value) != arma::size(g.steps[k].value)) continue;
      FuzzGraph h = g;
      for (std::size_t j = k + 1; j <= last; ++j) {
        for (int& b : h.steps[j].args) b = b == int(k) ? a : b;
      }
      out.push_back(prune(h, last));
    }
  }
  return out;
}

bool smaller(const FuzzGraph& a, const FuzzGraph& b) {
  return std::make_pair(a.op_count(), a.steps.size()) < std::make_pair(b.op_count(), b.steps.size());
}

}  // namespace

FuzzGraph shrink(const FuzzGraph& failing, const std::function<bool(const FuzzGraph&)>& fails) {
  FuzzGraph best = failing;
  if (!evaluate_graph(best)) return best;  // the values each edit keeps must be current
  for (bool progress = true; progress && !best.steps.empty();) {
    progress = false;
    for (FuzzGraph& candidate : smaller_graphs(best)) {
      if (!smaller(candidate, best) || !evaluate_graph(candidate) || !fails(candidate)) continue;
      best = std::move(candidate);
      progress = true;
      break;
    }
  }
  return best;
}

std::string FuzzFailure::describe() const {
  std::ostringstream os;
  // Every option that changes what a graph is checked for, so that the line reproduces the failure.
  const std::string order = forward_order > 0 ? " --forward-order " + std::to_string(forward_order) : "";
  os << "fuzz: the graph from seed " << seed << (forward_order > 0 ? " fails its checks" : " fails gradcheck")
     << " (rerun it alone: autograd fuzz --graphs 1 --seed " << seed << order << ")\n"
     << "smallest graph that still fails (" << shrunk.op_count() << " of " << graph.op_count() << " ops):\n"
     << shrunk.describe() << "why:\n" << shrunk_check.message;
  return os.str();
}

FuzzReport fuzz(int graphs, std::uint64_t first_seed, const FuzzOptions& options, int max_failures) {
  FuzzReport report;
  const auto fails = [&options](const FuzzGraph& g) { return !check_graph(g, options).passed; };
  for (int i = 0; i < graphs; ++i) {
    const std::uint64_t seed = first_seed + std::uint64_t(i);
    FuzzGraph graph = random_graph(seed, options);
    ++report.graphs;
    for (const FuzzStep& s : graph.steps) {
      if (s.op != "leaf") ++report.op_counts[s.op];
    }
    FuzzCheck check = check_graph(graph, options);
    if (check.passed) continue;
    FuzzFailure f;
    f.seed = seed;
    f.forward_order = options.forward_order;
    f.shrunk = shrink(graph, fails);
    f.shrunk_check = check_graph(f.shrunk, options);
    f.graph = std::move(graph);
    f.check = std::move(check);
    report.failures.push_back(std::move(f));
    if (int(report.failures.size()) >= max_failures) break;
  }
  return report;
}

}  // namespace ag
