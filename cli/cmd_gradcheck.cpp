// autograd gradcheck: every op's backward against central finite differences.
#include <iomanip>
#include <iostream>

#include "cli/cli.h"
#include "check/op_table.h"

namespace cli {

int cmd_gradcheck(const std::vector<std::string>& args) {
  po::options_description options("options");
  std::string only;
  long long seed = 0;
  options.add_options()
      ("op", po::value(&only), "check only this op (a name from the table, e.g. mul or \"var(dim=1)\")")
      ("seed", po::value(&seed)->default_value(0), "seed for the random inputs")
      ("markdown", "print the op table (op, forward, backward) as Markdown instead of checking");
  po::variables_map vm;
  if (!parse_options("gradcheck", "Checks each op's backward against central finite differences\n"
                     "(eps 1e-6, atol 1e-5, rtol 1e-3) on random inputs in double precision.",
                     options, args, vm)) {
    return 0;
  }
  if (seed < 0) throw UsageError("--seed must be 0 or more, got " + std::to_string(seed));
  if (vm.count("markdown")) {
    std::cout << "| op | forward | backward |\n|---|---|---|\n";
    for (const ag::OpCase& op : ag::op_table()) {
      std::cout << "| `" << op.name << "` | " << op.forward << " | " << op.backward << " |\n";
    }
    return 0;
  }

  bool found = false, all_passed = true;
  std::cout << std::left << std::setw(26) << "op" << std::setw(14) << "shapes" << std::setw(14)
            << "max abs err" << std::setw(14) << "max rel err" << "result\n";
  int index = 0;
  for (const ag::OpCase& op : ag::op_table()) {
    ++index;
    if (!only.empty() && op.name != only) continue;
    found = true;
    // Each op gets its own stream, so --op X sees the same inputs as the full run.
    std::mt19937_64 rng(static_cast<unsigned long long>(seed) * 1000003ULL + index);
    ag::GradcheckOptions gc;
    gc.seed = static_cast<unsigned>(seed);
    const ag::GradcheckReport r = ag::gradcheck(op.f, ag::make_inputs(op, rng), gc);
    double abs_err = 0, rel_err = 0;
    for (const ag::InputReport& in : r.inputs) {
      abs_err = std::max(abs_err, in.max_abs_error);
      rel_err = std::max(rel_err, in.max_rel_error);
    }
    all_passed = all_passed && r.passed;
    std::cout << std::setw(26) << op.name << std::setw(14) << ag::shapes_str(op.inputs)
              << std::setw(14) << std::setprecision(3) << abs_err << std::setw(14) << rel_err
              << (r.passed ? "PASS" : "FAIL") << "\n";
    if (!r.passed) std::cout << r.summary();
  }
  if (!found) throw UsageError("no op named '" + only + "' (autograd gradcheck lists them all)");
  return all_passed ? 0 : 1;
}

}  // namespace cli
