// autograd gradcheck: every op's backward against central finite differences;
// with --mode forward|both its forward mode too (the transpose identity against
// reverse mode, the JVP against finite differences), with --order 2 its
// Hessian-vector products (reverse-over-forward) and the Hessian's symmetry.
#include <algorithm>
#include <iomanip>
#include <iostream>

#include "autograd/rng.h"
#include "check/forward_check.h"
#include "check/op_table.h"
#include "cli/cli.h"

namespace cli {

namespace {

struct Checks {
  bool reverse = true, forward = false;
  int order = 1;
};

// The "check" column is printed only when forward checks run, so the default table stays as it was.
std::string check_column(const Checks& checks, const char* what) {
  if (!checks.forward && checks.order < 2) return "";
  std::string s = what;
  s.resize(10, ' ');
  return s;
}

bool reverse_case(const ag::OpRow& row, const ag::GradcheckCase& c, const std::vector<arma::mat>& x,
                  const ag::GradcheckOptions& options, const Checks& checks) {
  const ag::GradcheckReport r = ag::gradcheck(ag::tape_function(row), x, options);
  double abs_err = 0, rel_err = 0;
  for (const ag::InputReport& in : r.inputs) {
    abs_err = std::max(abs_err, in.max_abs_error);
    rel_err = std::max(rel_err, in.max_rel_error);
  }
  std::cout << std::setw(32) << ag::case_name(row, c) << std::setw(16) << ag::shapes_str(c)
            << check_column(checks, "reverse") << std::setw(14) << std::setprecision(3) << abs_err << std::setw(14) << rel_err
            << (r.passed ? "PASS" : "FAIL") << "\n";
  if (!r.passed) std::cout << r.summary();
  return r.passed;
}

// The forward line's two numbers: the transpose identity's relative error and
// the worst relative error against finite differences (JVP, and HVP at order 2).
bool forward_case(const ag::OpRow& row, const ag::GradcheckCase& c, const std::vector<arma::mat>& x,
                  const ag::GradcheckOptions& options, int order) {
  const ag::ForwardCheck r = ag::check_forward(ag::tape_function(row), x, order, options);
  const Checks forward{false, true, order};
  const double fd_err = std::max(r.jvp.max_rel_error, order >= 2 ? r.hvp.max_rel_error : 0.0);
  std::cout << std::setw(32) << ag::case_name(row, c) << std::setw(16) << ag::shapes_str(c)
            << check_column(forward, order >= 2 ? "order 2" : "forward") << std::setw(14) << std::setprecision(3) << r.transpose.rel_error
            << std::setw(14) << fd_err << (r.passed ? "PASS" : "FAIL") << "\n";
  if (!r.passed) std::cout << r.summary();
  return r.passed;
}

// One case: its line(s) of the table, then the failing check's summary.
bool check_case(const ag::OpRow& row, const ag::GradcheckCase& c, std::uint64_t seed, std::uint64_t stream,
                const Checks& checks) {
  ag::Rng rng(ag::derive_seed(seed, stream));
  ag::GradcheckOptions options;
  options.seed = static_cast<unsigned>(seed);
  const std::vector<arma::mat> x = ag::make_inputs(row, c, rng);
  bool passed = true;
  if (checks.reverse) passed = reverse_case(row, c, x, options, checks) && passed;
  if (checks.forward || checks.order >= 2) passed = forward_case(row, c, x, options, checks.order) && passed;
  return passed;
}

Checks parse_checks(const std::string& mode, int order) {
  Checks checks;
  if (mode == "reverse") checks = {true, false, order};
  else if (mode == "forward") checks = {false, true, order};
  else if (mode == "both") checks = {true, true, order};
  else throw UsageError("--mode must be forward, reverse or both, got '" + mode + "'");
  if (order != 1 && order != 2) throw UsageError("--order must be 1 or 2, got " + std::to_string(order));
  return checks;
}

// The table's header: forward lines put the transpose identity's relative error in the
// first column, the worst relative error against finite differences (JVP; HVP at order 2) in the second.
void print_header(const Checks& checks) {
  if (checks.forward || checks.order >= 2) {
    std::cout << std::left << std::setw(32) << "op" << std::setw(16) << "shapes" << std::setw(10) << "check"
              << std::setw(14) << "abs|transp" << std::setw(14) << "max rel err" << "result\n";
  } else {
    std::cout << std::left << std::setw(32) << "op" << std::setw(16) << "shapes" << std::setw(14) << "max abs err"
              << std::setw(14) << "max rel err" << "result\n";
  }
}

// Every case of `only` (empty: of every row). Case k of the whole table draws from
// stream k, so --op X sees the same inputs as the full run.
bool check_rows(const std::string& only, std::uint64_t seed, const Checks& checks) {
  const std::vector<const ag::OpRow*> rows = ag::all_rows();
  // An unknown name is refused before anything is printed.
  if (!only.empty() && std::none_of(rows.begin(), rows.end(), [&](const ag::OpRow* r) { return r->name == only; })) {
    throw UsageError("no op named '" + only + "' (autograd gradcheck lists them all)");
  }
  print_header(checks);
  bool all_passed = true;
  std::uint64_t stream = 0;
  for (const ag::OpRow* row : rows) {
    const bool wanted = only.empty() || row->name == only;
    for (const ag::GradcheckCase& c : row->cases) {
      ++stream;
      if (wanted) all_passed = check_case(*row, c, seed, stream, checks) && all_passed;
    }
  }
  return all_passed;
}

}  // namespace

int cmd_gradcheck(const std::vector<std::string>& args) {
  po::options_description options("options");
  std::string only, mode = "reverse";
  long long seed = 0;
  int order = 1;
  options.add_options()
      ("op", po::value(&only), "check only this op or function (a name from the table, e.g. mul or \"var(dim=1)\")")
      ("seed", po::value(&seed)->default_value(0), "seed for the random inputs")
      ("mode", po::value(&mode)->default_value("reverse"),
       "reverse (backward against finite differences), forward (the transpose identity <u, J v> = <J^T u, v> "
       "to 1e-12 and the JVP against finite differences) or both")
      ("order", po::value(&order)->default_value(1),
       "2: also each Hessian-vector product (reverse-over-forward) against finite differences of the "
       "gradient, and the Hessian's symmetry")
      ("markdown", "print the op table (op, forward, backward) as Markdown instead of checking");
  po::variables_map vm;
  if (!parse_options("gradcheck", "Checks each op's backward against central finite differences\n"
                     "(eps 1e-6, atol 1e-5, rtol 1e-3) on random inputs in double precision,\n"
                     "then each function composed of ops; --mode and --order add forward mode\n"
                     "and second order (docs/forward-mode.md).",
                     options, args, vm)) {
    return 0;
  }
  if (seed < 0) throw UsageError("--seed must be 0 or more, got " + std::to_string(seed));
  const Checks checks = parse_checks(mode, order);
  if (vm.count("markdown")) {
    std::cout << ag::op_table_markdown();
    return 0;
  }
  return check_rows(only, static_cast<std::uint64_t>(seed), checks) ? 0 : 1;
}

}  // namespace cli
