// autograd gradcheck: every op's backward against central finite differences.
#include <algorithm>
#include <iomanip>
#include <iostream>

#include "autograd/rng.h"
#include "check/op_table.h"
#include "cli/cli.h"

namespace cli {

namespace {

// One gradcheck case: its line of the table, then gradcheck's summary if it fails.
bool check_case(const ag::OpRow& row, const ag::GradcheckCase& c, std::uint64_t seed, std::uint64_t stream) {
  ag::Rng rng(ag::derive_seed(seed, stream));
  ag::GradcheckOptions options;
  options.seed = static_cast<unsigned>(seed);
  const ag::GradcheckReport r = ag::gradcheck(ag::tape_function(row), ag::make_inputs(row, c, rng), options);
  double abs_err = 0, rel_err = 0;
  for (const ag::InputReport& in : r.inputs) {
    abs_err = std::max(abs_err, in.max_abs_error);
    rel_err = std::max(rel_err, in.max_rel_error);
  }
  std::cout << std::setw(32) << ag::case_name(row, c) << std::setw(16) << ag::shapes_str(c) << std::setw(14)
            << std::setprecision(3) << abs_err << std::setw(14) << rel_err << (r.passed ? "PASS" : "FAIL") << "\n";
  if (!r.passed) std::cout << r.summary();
  return r.passed;
}

}  // namespace

int cmd_gradcheck(const std::vector<std::string>& args) {
  po::options_description options("options");
  std::string only;
  long long seed = 0;
  options.add_options()
      ("op", po::value(&only), "check only this op or function (a name from the table, e.g. mul or \"var(dim=1)\")")
      ("seed", po::value(&seed)->default_value(0), "seed for the random inputs")
      ("markdown", "print the op table (op, forward, backward) as Markdown instead of checking");
  po::variables_map vm;
  if (!parse_options("gradcheck", "Checks each op's backward against central finite differences\n"
                     "(eps 1e-6, atol 1e-5, rtol 1e-3) on random inputs in double precision,\n"
                     "then each function composed of ops.",
                     options, args, vm)) {
    return 0;
  }
  if (seed < 0) throw UsageError("--seed must be 0 or more, got " + std::to_string(seed));
  if (vm.count("markdown")) {
    std::cout << ag::op_table_markdown();
    return 0;
  }

  // An unknown name is refused before anything is printed.
  const std::vector<const ag::OpRow*> rows = ag::all_rows();
  if (!only.empty() && std::none_of(rows.begin(), rows.end(), [&](const ag::OpRow* r) { return r->name == only; })) {
    throw UsageError("no op named '" + only + "' (autograd gradcheck lists them all)");
  }
  bool all_passed = true;
  std::cout << std::left << std::setw(32) << "op" << std::setw(16) << "shapes" << std::setw(14) << "max abs err"
            << std::setw(14) << "max rel err" << "result\n";
  // Case k of the whole table draws from stream k, so --op X sees the same inputs as the full run.
  std::uint64_t stream = 0;
  for (const ag::OpRow* row : rows) {
    const bool wanted = only.empty() || row->name == only;
    for (const ag::GradcheckCase& c : row->cases) {
      ++stream;
      if (wanted) all_passed = check_case(*row, c, static_cast<std::uint64_t>(seed), stream) && all_passed;
    }
  }
  return all_passed ? 0 : 1;
}

}  // namespace cli
