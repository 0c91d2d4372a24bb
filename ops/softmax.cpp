#include "ops/softmax.h"

#include <functional>

#include "ops/broadcast.h"
#include "ops/elementwise.h"
#include "ops/reduce.h"

namespace ag {

namespace {

// "softmax(dim=1)": the name the fused op records, and the one its errors give.
std::string along_name(const char* op, int d) { return std::string(op) + (d == 0 ? "(dim=0)" : "(dim=1)"); }

arma::uword count_along(const arma::mat& x, int d) { return d == 0 ? x.n_rows : x.n_cols; }
Shape shape_of(const arma::mat& x) { return {x.n_rows, x.n_cols}; }

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

// softmax(x) = exp(x - logsumexp(x))
Var softmax_composed(Var x, int dim) {
  tape_of("softmax_composed", x);
  const int d = normalize_dim("softmax_composed", dim);
  // logsumexp refuses to reduce nothing; rows of no entries have an empty softmax, which exp(x) is.
  if (count_along(x.value(), d) == 0) return exp(x);
  return exp(x - logsumexp(x, d));
}

// log_softmax(x) = x - logsumexp(x)
Var log_softmax_composed(Var x, int dim) {
  tape_of("log_softmax_composed", x);
  const int d = normalize_dim("log_softmax_composed", dim);
  if (count_along(x.value(), d) == 0) return x;  // empty, as above
  return x - logsumexp(x, d);
}

// ---- fused: one node, saving only its output ------------------------------------

// y = exp(x - max) / sum(exp(x - max));  dx = y * (dy - sum(dy * y))
Var softmax(Var x, int dim) {
  Tape& t = tape_of("softmax", x);
  const int d = normalize_dim("softmax", dim);
  return t.record(
      along_name("softmax", d), {x}, arma::exp(log_normalised(x.value(), d)),
      [d](Tape& t, const Node& n) {
        const arma::mat& y = n.value;
        const Shape s = shape_of(y);
        const arma::mat dot = arma::sum(n.grad % y, d);  // sum(dy * y) along d
        t.accumulate(n.inputs[0], y % broadcast_apply(n.grad, dot, s, std::minus<>()));
      },
      Saved{{}, true});
}

// y = x - logsumexp(x);  dx = dy - exp(y) * sum(dy)
Var log_softmax(Var x, int dim) {
  Tape& t = tape_of("log_softmax", x);
  const int d = normalize_dim("log_softmax", dim);
  return t.record(
      along_name("log_softmax", d), {x}, log_normalised(x.value(), d),
      [d](Tape& t, const Node& n) {
        const Shape s = shape_of(n.value);
        const arma::mat softmax = arma::exp(n.value);
        const arma::mat total = arma::sum(n.grad, d);  // sum(dy) along d
        t.accumulate(n.inputs[0], n.grad - broadcast_apply(softmax, total, s, std::multiplies<>()));
      },
      Saved{{}, true});
}

}  // namespace ag
