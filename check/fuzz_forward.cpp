// Fuzz graphs in forward mode and at second order: the same random graphs,
// the checks of check/forward_check.h instead of gradcheck.
#include "check/forward_check.h"
#include "autograd/rng.h"
#include "check/fuzz.h"

namespace ag {

FuzzCheck check_graph_forward(const FuzzGraph& graph, int order, const GradcheckOptions& options,
                              double transpose_tolerance) {
  FuzzCheck check;
  try {
    const TapeFunction f = [&graph](Tape& tape, const std::vector<Var>& leaves) {
      tape.set_anomaly_mode(true);  // a NaN in a value or a tangent stops at the op that made it
      return graph.run(tape, leaves);
    };
    const std::vector<arma::mat> x = graph.leaf_values();
    ForwardCheck r = check_forward(f, x, order, options);
    r.transpose = transpose_identity(f, x, derive_seed(options.seed, 3), transpose_tolerance);
    r.passed = r.transpose.passed && r.jvp.passed && (order < 2 || (r.hvp.passed && r.symmetry.passed));
    check.passed = r.passed;
    if (!r.passed) check.message = r.summary();
  } catch (const std::exception& e) {
    check.passed = false;
    check.message = std::string("exception: ") + e.what() + "\n";
  }
  return check;
}

FuzzCheck check_graph(const FuzzGraph& graph, const FuzzOptions& options) {
  FuzzCheck check = check_graph(graph, options.gradcheck);
  if (!check.passed || options.forward_order <= 0) return check;
  return check_graph_forward(graph, options.forward_order, options.gradcheck);
}

}  // namespace ag
