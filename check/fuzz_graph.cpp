// A fuzz graph replayed on a tape, and printed the way a failure shows it.
#include <iomanip>
#include <sstream>

#include "check/fuzz.h"
#include "check/fuzz_steps.h"

namespace ag {

using namespace fuzz_detail;

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
      for (double c : s.constants) {
        std::ostringstream text;
        text << std::setprecision(4) << c;
        call += ", " + text.str();
      }
      call += ")";
    }
    os << "  v" << std::left << std::setw(3) << k << " = " << std::setw(28) << call + " " << shape_str(s.value);
    if (s.op == "leaf") os << "  " << (s.value.n_elem <= 24 ? literal(s.value) : "(values not shown)");
    os << "\n";
  }
  os << "  output: v" << (steps.empty() ? 0 : steps.size() - 1) << "\n";
  return os.str();
}

}  // namespace ag
