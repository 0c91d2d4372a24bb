// autograd fuzz: random expression graphs against central finite differences.
#include <algorithm>
#include <iostream>
#include <limits>

#include "check/fuzz.h"
#include "cli/cli.h"

namespace cli {

int cmd_fuzz(const std::vector<std::string>& args) {
  po::options_description options("options");
  long long graphs = 1000, seed = 1;
  bool print = false;
  int order = 0;
  options.add_options()
      ("graphs", po::value(&graphs)->default_value(1000), "how many graphs to check")
      ("seed", po::value(&seed)->default_value(1), "seed of the first graph; graph k uses seed + k")
      ("print", po::bool_switch(&print), "print every graph before checking it")
      ("forward-order", po::value(&order)->default_value(0),
       "1: also check forward mode (the transpose identity to 1e-12, the JVP against finite differences); "
       "2: also each graph's Hessian-vector product and the Hessian's symmetry");
  po::variables_map vm;
  if (!parse_options("fuzz", "Draws random expression graphs (10 to 30 ops: every primitive, broadcasting,\n"
                     "reductions, values reused) and checks each one's gradients against central\n"
                     "finite differences. A failure prints its seed and the smallest graph that still fails.",
                     options, args, vm)) {
    return 0;
  }
  require_positive("graphs", graphs);
  require_non_negative("seed", seed);
  if (order < 0 || order > 2) throw UsageError("--forward-order must be 0, 1 or 2, got " + std::to_string(order));
  // Graph k uses seed + k: the last seed must still be a signed 64-bit number.
  if (graphs - 1 > std::numeric_limits<long long>::max() - seed) {
    throw UsageError("--seed " + std::to_string(seed) + " with --graphs " + std::to_string(graphs) +
                     " runs past the largest seed, " + std::to_string(std::numeric_limits<long long>::max()));
  }

  const std::uint64_t first = static_cast<std::uint64_t>(seed);
  ag::FuzzOptions fuzz_options;
  fuzz_options.forward_order = order;
  std::map<std::string, int> op_counts;
  long long done = 0;
  // In chunks of 1000, so a long run shows it is alive.
  while (done < graphs) {
    const int chunk = print ? 1 : int(std::min<long long>(1000, graphs - done));
    if (print) std::cout << ag::random_graph(first + std::uint64_t(done), fuzz_options).describe();
    const ag::FuzzReport r = ag::fuzz(chunk, first + std::uint64_t(done), fuzz_options);
    for (const auto& [op, n] : r.op_counts) op_counts[op] += n;
    if (!r.failures.empty()) {
      std::cout << r.failures[0].describe();
      return 1;
    }
    done += chunk;
    if (graphs > 1000 && !print) std::cout << "  " << done << " graphs pass\n" << std::flush;
  }
  std::cout << "all " << graphs << " graphs (seeds " << seed << " to " << seed + graphs - 1
            << ") match finite differences (eps 1e-6, atol 1e-5, rtol 1e-3)"
            << (order >= 1 ? ", forward mode matches reverse mode" : "") << (order >= 2 ? " and second order" : "")
            << "\nops drawn:";
  for (const auto& [op, n] : op_counts) std::cout << " " << op << " " << n << ";";
  std::cout << "\n";
  return 0;
}

}  // namespace cli
