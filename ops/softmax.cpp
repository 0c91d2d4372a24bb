#include "ops/softmax.h"

#include <functional>

#include "ops/broadcast.h"
#include "ops/elementwise.h"
#include "ops/reduce.h"

namespace ag {

namespace {

arma::uword count_along(const arma::mat& x, int d) { return d == 0 ? x.n_rows : x.n_cols; }
Shape shape_of(const arma::mat& x) { return {x.n_rows, x.n_cols}; }
using J = const JvpArgs&;

// x - logsumexp(x) along d, shifted by the max so exp never overflows. A row
// whose entries are all -inf has no max to shift by: -inf - -inf is NaN, as in
// PyTorch; a row with some -inf entries gives them -inf (softmax 0).
arma::mat log_normalised(const arma::mat& x, int d) {
  if (x.is_empty()) return x;  // nothing to normalise; Armadillo's max of 0 columns is 0x0
  const Shape s = shape_of(x);
  const arma::mat shifted = broadcast_apply(x, arma::mat(arma::max(x, d)), s, std::minus<>());
  const arma::mat log_sum = arma::log(arma::sum(arma::exp(shifted), d));
  return broadcast_apply(shifted, log_sum, s, std::minus<>());
}

}  // namespace

// ---- composed: the tape derives the gradient ----------------------------------
// Composed: no node carries these names; forward mode runs through their ops' rules.

const OpDef& softmax_composed_def(int dim) {
  static const OpDef defs[2] = {
      composed_op("softmax_composed(dim=0)", 1, "y = exp(a - logsumexp(a)), down each column",
                  "derived by the tape from logsumexp, sub, exp"),
      composed_op("softmax_composed(dim=1)", 1, "y = exp(a - logsumexp(a)), across each row",
                  "derived by the tape from logsumexp, sub, exp")};
  return defs[normalize_dim("softmax_composed", dim)];
}
Var softmax_composed(Var x, int dim) {
  const OpDef& def = softmax_composed_def(dim);
  tape_of(def.name, x);
  const int d = normalize_dim(def.name, dim);
  // logsumexp refuses to reduce nothing; rows of no entries have an empty softmax, which exp(x) is.
  if (count_along(x.value(), d) == 0) return exp(x);
  return exp(x - logsumexp(x, d));
}

const OpDef& log_softmax_composed_def(int dim) {
  static const OpDef defs[2] = {
      composed_op("log_softmax_composed(dim=0)", 1, "y = a - logsumexp(a), down each column",
                  "derived by the tape from logsumexp, sub"),
      composed_op("log_softmax_composed(dim=1)", 1, "y = a - logsumexp(a), across each row",
                  "derived by the tape from logsumexp, sub")};
  return defs[normalize_dim("log_softmax_composed", dim)];
}
Var log_softmax_composed(Var x, int dim) {
  const OpDef& def = log_softmax_composed_def(dim);
  tape_of(def.name, x);
  const int d = normalize_dim(def.name, dim);
  if (count_along(x.value(), d) == 0) return x;  // empty, as above
  return x - logsumexp(x, d);
}

// ---- fused: one node, saving only its output ------------------------------------
// Its tangent, like its backward, reads y only: dy = y (dx - sum(y dx)).

namespace {
JvpFn softmax_rule(int d) { return [d](J j) { return j.y * (j.dx[0] - sum(j.y * j.dx[0], d)); }; }
}  // namespace

const OpDef& softmax_def(int dim) {
  static const OpDef defs[2] = {
      {"softmax(dim=0)", 1, "y_ij = exp(a_ij - logsumexp_i a_ij), down each column (one node)",
       "da = y (dy - sum_i dy y), saving only y", "dy = y (da - sum_i y da)", softmax_rule(0)},
      {"softmax(dim=1)", 1, "y_ij = exp(a_ij - logsumexp_j a_ij), across each row (one node)",
       "da = y (dy - sum_j dy y), saving only y", "dy = y (da - sum_j y da)", softmax_rule(1)}};
  return defs[normalize_dim("softmax", dim)];
}
Var softmax(Var x, int dim) {
  const OpDef& def = softmax_def(dim);
  Tape& t = tape_of(def.name, x);
  const int d = normalize_dim(def.name, dim);
  return t.record(
      def, {x}, arma::exp(log_normalised(x.value(), d)),
      [d](Tape& t, const Node& n) {
        const arma::mat& y = n.value;
        const Shape s = shape_of(y);
        const arma::mat dot = arma::sum(n.grad % y, d);  // sum(dy * y) along d
        t.accumulate(n.inputs[0], y % broadcast_apply(n.grad, dot, s, std::minus<>()));
      },
      Saved::output_only());
}

namespace {
// dy = dx - sum(softmax dx), softmax = exp(y).
JvpFn log_softmax_rule(int d) { return [d](J j) { return j.dx[0] - sum(exp(j.y) * j.dx[0], d); }; }
}  // namespace

const OpDef& log_softmax_def(int dim) {
  static const OpDef defs[2] = {
      {"log_softmax(dim=0)", 1, "y_ij = a_ij - logsumexp_i a_ij (one node)", "da = dy - exp(y) sum_i dy, saving only y",
       "dy = da - sum_i exp(y) da", log_softmax_rule(0)},
      {"log_softmax(dim=1)", 1, "y_ij = a_ij - logsumexp_j a_ij (one node)", "da = dy - exp(y) sum_j dy, saving only y",
       "dy = da - sum_j exp(y) da", log_softmax_rule(1)}};
  return defs[normalize_dim("log_softmax", dim)];
}
Var log_softmax(Var x, int dim) {
  const OpDef& def = log_softmax_def(dim);
  Tape& t = tape_of(def.name, x);
  const int d = normalize_dim(def.name, dim);
  return t.record(
      def, {x}, log_normalised(x.value(), d),
      [d](Tape& t, const Node& n) {
        const Shape s = shape_of(n.value);
        const arma::mat softmax = arma::exp(n.value);
        const arma::mat total = arma::sum(n.grad, d);  // sum(dy) along d
        t.accumulate(n.inputs[0], n.grad - broadcast_apply(softmax, total, s, std::multiplies<>()));
      },
      Saved::output_only());
}

}  // namespace ag
