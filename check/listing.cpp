#include "check/listing.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

namespace ag {

namespace {
// A node a forward-mode pass recorded reads "tangent: mul", so the primal and
// the tangent computation can be told apart on one tape.
std::string listed_op(const Node& n) { return n.tangent ? "tangent: " + op_label(n) : op_label(n); }
}  // namespace

std::string format_tape(const Tape& tape) {
  // The op column fits its longest label ("layernorm_fused eps=1e-05"), 22 at least.
  std::size_t width = 22, tangents = 0;
  for (std::size_t i = 0; i < tape.size(); ++i) {
    width = std::max(width, listed_op(tape.node(i)).size() + 2);
    tangents += tape.node(i).tangent ? 1 : 0;
  }
  const int op_width = static_cast<int>(width);
  std::ostringstream os;
  os << std::left << std::setw(5) << "id" << std::setw(op_width) << "op" << std::setw(14) << "inputs"
     << std::setw(10) << "shape" << "saved bytes\n";
  for (std::size_t i = 0; i < tape.size(); ++i) {
    const Node& n = tape.node(i);
    std::string inputs;
    for (std::size_t k : n.inputs) inputs += (inputs.empty() ? "" : ",") + std::to_string(k);
    os << std::setw(5) << i << std::setw(op_width) << listed_op(n) << std::setw(14) << (inputs.empty() ? "-" : inputs)
       << std::setw(10) << shape_str(n.value) << tape.node_saved_bytes(i) << "\n";
  }
  os << tape.size() << " nodes";
  if (tangents > 0) os << " (" << tangents << " of them tangents)";
  os << ", " << tape.saved_bytes() << " bytes held for backward\n";
  return os.str();
}

std::string format_matrix(const arma::mat& m, int precision) {
  std::ostringstream os;
  os << std::setprecision(precision);
  for (arma::uword r = 0; r < m.n_rows; ++r) {
    os << "[";
    for (arma::uword c = 0; c < m.n_cols; ++c) os << (c ? ", " : "") << m(r, c);
    os << "]\n";
  }
  return os.str();
}

}  // namespace ag
