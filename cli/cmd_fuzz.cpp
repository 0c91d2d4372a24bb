// autograd fuzz: random expression graphs against central finite differences.
#include <algorithm>
#include <iostream>
#include <limits>
#include <map>

#include "check/fuzz.h"
#include "cli/cli.h"

namespace cli {

namespace {

struct FuzzSettings {
  long long graphs = 1000, seed = 1;
  bool print = false;
  int order = 0;  // --forward-order
};

void check_settings(const FuzzSettings& f) {
  require_positive("graphs", f.graphs);
  require_non_negative("seed", f.seed);
  if (f.order < 0 || f.order > 2) throw UsageError("--forward-order must be 0, 1 or 2, got " + std::to_string(f.order));
  // Graph k uses seed + k: the last seed must still be a signed 64-bit number.
  if (f.graphs - 1 > std::numeric_limits<long long>::max() - f.seed) {
    throw UsageError("--seed " + std::to_string(f.seed) + " with --graphs " + std::to_string(f.graphs) +
                     " runs past the largest seed, " + std::to_string(std::numeric_limits<long long>::max()));
  }
}

// Checks the graphs in chunks of 1000, so a long run shows it is alive; false
// after printing the first failure. Adds to `op_counts` the ops drawn.
bool run_graphs(const FuzzSettings& f, std::map<std::string, int>& op_counts) {
  const std::uint64_t first = static_cast<std::uint64_t>(f.seed);
  ag::FuzzOptions fuzz_options;
  fuzz_options.forward_order = f.order;
  for (long long done = 0; done < f.graphs;) {
    const int chunk = f.print ? 1 : int(std::min<long long>(1000, f.graphs - done));
    if (f.print) std::cout << ag::random_graph(first + std::uint64_t(done), fuzz_options).describe();
    const ag::FuzzReport r = ag::fuzz(chunk, first + std::uint64_t(done), fuzz_options);
    for (const auto& [op, n] : r.op_counts) op_counts[op] += n;
    if (!r.failures.empty()) {
      std::cout << r.failures[0].describe();
      return false;
    }
    done += chunk;
    if (f.graphs > 1000 && !f.print) std::cout << "  " << done << " graphs pass\n" << std::flush;
  }
  return true;
}

void print_summary(const FuzzSettings& f, const std::map<std::string, int>& op_counts) {
  std::cout << "all " << f.graphs << " graphs (seeds " << f.seed << " to " << f.seed + f.graphs - 1
            << ") match finite differences (eps 1e-6, atol 1e-5, rtol 1e-3)"
            << (f.order >= 1 ? ", forward mode matches reverse mode" : "") << (f.order >= 2 ? " and second order" : "")
            << "\nops drawn:";
  for (const auto& [op, n] : op_counts) std::cout << " " << op << " " << n << ";";
  std::cout << "\n";
}

}  // namespace

int cmd_fuzz(const std::vector<std::string>& args) {
  po::options_description options("options");
  FuzzSettings f;
  options.add_options()
      ("graphs", po::value(&f.graphs)->default_value(1000), "how many graphs to check")
      ("seed", po::value(&f.seed)->default_value(1), "seed of the first graph; graph k uses seed + k")
      ("print", po::bool_switch(&f.print), "print every graph before checking it")
      ("forward-order", po::value(&f.order)->default_value(0),
       "1: also check forward mode (the transpose identity to 1e-12, the JVP against finite differences); "
       "2: also each graph's Hessian-vector product and the Hessian's symmetry");
  po::variables_map vm;
  if (!parse_options("fuzz", "Draws random expression graphs (10 to 30 ops: every primitive, broadcasting,\n"
                     "reductions, values reused) and checks each one's gradients against central\n"
                     "finite differences. A failure prints its seed and the smallest graph that still fails.",
                     options, args, vm)) {
    return 0;
  }
  check_settings(f);
  std::map<std::string, int> op_counts;
  if (!run_graphs(f, op_counts)) return 1;
  print_summary(f, op_counts);
  return 0;
}

}  // namespace cli
