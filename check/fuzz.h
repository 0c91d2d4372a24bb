// Property-based testing of the whole engine: random expression graphs,
// each checked against central finite differences with gradcheck.
//
// A graph is a list of steps; step k reads earlier steps by index, so a value
// can feed several later steps (the diamonds where gradients must add up).
// Leaves have shapes NxD, 1xD, Nx1, 1x1 or DxM, so the binary ops broadcast,
// and every row of the op table (check/op_table.h) can be drawn. Inputs stay
// inside each row's domains: log, sqrt and fractional powers read a
// positive-ified value (square(x) + 0.5 or exp(x)), divisors are bounded away
// from zero, and relu and max never sit within reach of their kinks.
//
// When a graph fails, `shrink` drops steps and replaces subexpressions with
// leaves (holding the values they had) while the graph still fails, so the
// report shows the smallest graph that shows the bug:
//
//   ag::FuzzReport r = ag::fuzz(500, 1);   // graphs seeded 1, 2, ..., 500
//   if (!r.failures.empty()) std::cout << r.failures[0].describe();
#pragma once

#include <armadillo>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "autograd/gradcheck.h"

namespace ag {

// An op of your own to mix into the graphs: y = apply(x) for any real x.
// The test suite plants one with a wrong backward to prove the shrinker works.
struct FuzzCustomOp {
  std::string name;
  std::function<Var(Var)> apply;
};

struct FuzzOptions {
  int min_nodes = 10;  // recorded ops per graph, leaves not counted
  int max_nodes = 30;
  std::vector<FuzzCustomOp> custom_ops;  // drawn like the built-in unary ops
  GradcheckOptions gradcheck;            // eps, atol, rtol of the check
  // 1: also forward mode (the transpose identity against reverse mode, the JVP
  // against finite differences); 2: also the HVP and the Hessian's symmetry
  // (check/forward_check.h). 0: reverse mode only.
  int forward_order = 0;
};

// One step: a leaf (holding a value) or an op applied to earlier steps.
struct FuzzStep {
  std::string op;          // "leaf", "add", "log", "sum(dim=0)", "var_unbiased(dim=1)", custom name
  std::vector<int> args;   // indices of earlier steps
  std::vector<double> constants;  // the row's constants: add_scalar's c, layernorm_fused's eps
  arma::mat value;         // the leaf's value (and, for every step, the value it had when drawn)
};

struct FuzzGraph {
  std::uint64_t seed = 0;
  std::vector<FuzzStep> steps;  // the last step is the output
  std::vector<FuzzCustomOp> custom_ops;

  // Replays the graph on `tape` with `leaves` standing for the leaf steps, in order.
  Var run(Tape& tape, const std::vector<Var>& leaves) const;
  std::vector<arma::mat> leaf_values() const;
  int op_count() const;  // steps that are not leaves
  // One line per step: "v4 = log(v3)   3x4", then the output.
  std::string describe() const;
};

// A graph with min_nodes..max_nodes ops, the same for the same seed.
FuzzGraph random_graph(std::uint64_t seed, const FuzzOptions& options = {});

// Gradcheck of one graph (anomaly mode on). An exception thrown while
// checking, such as a shape error, is a failure too; its message is kept.
struct FuzzCheck {
  bool passed = true;
  std::string message;  // gradcheck's per-input summary, or the exception
};
FuzzCheck check_graph(const FuzzGraph& graph, const GradcheckOptions& options = {});
// Forward mode and, at order 2, second order on one graph (check/fuzz_forward.cpp);
// the transpose identity to `transpose_tolerance` relative.
FuzzCheck check_graph_forward(const FuzzGraph& graph, int order, const GradcheckOptions& options = {},
                              double transpose_tolerance = 1e-12);
// What fuzz() checks: gradcheck, then check_graph_forward when options.forward_order > 0.
FuzzCheck check_graph(const FuzzGraph& graph, const FuzzOptions& options);

// True when every op's input is inside its domain (the generator's own rule).
bool graph_is_valid(const FuzzGraph& graph);

// The smallest graph found, by greedy steps that keep the graph valid and failing.
FuzzGraph shrink(const FuzzGraph& failing, const std::function<bool(const FuzzGraph&)>& fails);

struct FuzzFailure {
  std::uint64_t seed = 0;
  int forward_order = 0;  // FuzzOptions::forward_order it was found with (the rerun line repeats it)
  FuzzGraph graph, shrunk;
  FuzzCheck check, shrunk_check;
  std::string describe() const;  // the seed, the shrunk graph and why it fails
};

struct FuzzReport {
  int graphs = 0;
  std::vector<FuzzFailure> failures;
  std::map<std::string, int> op_counts;  // how often each op was drawn, over all graphs
};

// Checks `graphs` graphs seeded first_seed, first_seed + 1, ...; stops after
// max_failures failures (each one shrunk), so a bug does not cost hours.
FuzzReport fuzz(int graphs, std::uint64_t first_seed, const FuzzOptions& options = {},
                int max_failures = 1);

}  // namespace ag
