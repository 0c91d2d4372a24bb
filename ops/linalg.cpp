#include "ops/linalg.h"

#include "ops/elementwise.h"

namespace ag {

const OpDef& matmul_def() {
  static const OpDef def{"matmul", 2, "Y = A B", "dA = dY B^T; dB = A^T dY", "dY = dA B + A dB",
                         [](const JvpArgs& j) { return matmul(j.dx[0], j.x[1]) + matmul(j.x[0], j.dx[1]); }};
  return def;
}
Var matmul(Var a, Var b) {
  const OpDef& def = matmul_def();
  Tape& t = tape_of(def.name, a, b);
  const arma::mat& A = a.value();
  const arma::mat& B = b.value();
  if (A.n_cols != B.n_rows) {
    throw Error(std::string(def.name) + ": cannot multiply " + shape_str(A) + " by " + shape_str(B) +
                ": the first has " + std::to_string(A.n_cols) + " columns, the second " +
                std::to_string(B.n_rows) + " rows (they must be equal)");
  }
  return t.record(
      def, {a, b}, A * B,
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

const OpDef& transpose_def() {
  static const OpDef def{"transpose", 1, "Y = A^T", "dA = dY^T", "dY = dA^T",
                         [](const JvpArgs& j) { return transpose(j.dx[0]); }};
  return def;
}
Var transpose(Var a) {
  const OpDef& def = transpose_def();
  Tape& t = tape_of(def.name, a);
  return t.record(def, {a}, transposed(a.value()),
                  [](Tape& t, const Node& n) { t.accumulate(n.inputs[0], transposed(n.grad)); });
}

}  // namespace ag
