#include "ops/linalg.h"

namespace ag {

// Y = A B;  dA = dY B^T,  dB = A^T dY
Var matmul(Var a, Var b) {
  Tape& t = tape_of("matmul", a, b);
  const arma::mat& A = a.value();
  const arma::mat& B = b.value();
  if (A.n_cols != B.n_rows) {
    throw Error("matmul: cannot multiply " + shape_str(A) + " by " + shape_str(B) +
                ": the first has " + std::to_string(A.n_cols) + " columns, the second " +
                std::to_string(B.n_rows) + " rows (they must be equal)");
  }
  return t.record(
      "matmul", {a, b}, A * B,
      [](Tape& t, const Node& n) {
        const arma::mat& A = t.value(n.inputs[0]);
        const arma::mat& B = t.value(n.inputs[1]);
        t.accumulate(n.inputs[0], n.grad * B.t());
        t.accumulate(n.inputs[1], A.t() * n.grad);
      },
      Saved{{a, b}});
}

namespace {
// m^T. Armadillo transposes an empty matrix by reading through its null
// storage (undefined behaviour, UBSan says), so an empty one is only reshaped.
arma::mat transposed(const arma::mat& m) { return m.is_empty() ? arma::mat(m.n_cols, m.n_rows) : arma::mat(m.t()); }
}  // namespace

// Y = A^T;  dA = dY^T
Var transpose(Var a) {
  Tape& t = tape_of("transpose", a);
  return t.record("transpose", {a}, transposed(a.value()),
                  [](Tape& t, const Node& n) { t.accumulate(n.inputs[0], transposed(n.grad)); });
}

}  // namespace ag
