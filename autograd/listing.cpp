#include "autograd/listing.h"

#include <iomanip>
#include <sstream>

namespace ag {

std::size_t node_saved_bytes(const Tape& tape, std::size_t id) {
  const Node& n = tape.node(id);
  if (!n.backward) return 0;
  std::size_t bytes = n.extra_saved_bytes;
  for (std::size_t s : n.saved) bytes += tape.value(s).n_elem * sizeof(double);
  return bytes;
}

std::string format_tape(const Tape& tape) {
  std::ostringstream os;
  os << std::left << std::setw(5) << "id" << std::setw(22) << "op" << std::setw(14) << "inputs"
     << std::setw(10) << "shape" << "saved bytes\n";
  for (std::size_t i = 0; i < tape.size(); ++i) {
    const Node& n = tape.node(i);
    std::string inputs;
    for (std::size_t k : n.inputs) inputs += (inputs.empty() ? "" : ",") + std::to_string(k);
    os << std::setw(5) << i << std::setw(22) << n.op << std::setw(14) << (inputs.empty() ? "-" : inputs)
       << std::setw(10) << shape_str(n.value) << node_saved_bytes(tape, i) << "\n";
  }
  os << tape.size() << " nodes, " << tape.saved_bytes() << " bytes held for backward\n";
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
