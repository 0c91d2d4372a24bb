#include "ops/reduce.h"

#include <functional>

#include "ops/broadcast.h"

namespace ag {

int normalize_dim(const char* op, int dim) {
  if (dim == 0 || dim == -2) return 0;
  if (dim == 1 || dim == -1) return 1;
  throw Error(std::string(op) + ": dim must be 0 (down each column), 1 (across each row) or -1; got " +
              std::to_string(dim));
}

namespace {
// Number of elements each output element of a reduction along d summarises.
arma::uword count_along(const arma::mat& m, int d) { return d == 0 ? m.n_rows : m.n_cols; }

// "mean(dim=1)": the name a reduction along d records, and the one its errors give.
std::string along_name(const char* op, int d) { return std::string(op) + (d == 0 ? "(dim=0)" : "(dim=1)"); }

// A mean, variance, max or logsumexp of nothing has no value (a sum of nothing
// is 0): throws unless every output element summarises at least `needed`
// values. An output with no elements (0 rows reduced across, say) needs none.
void require_along(const std::string& op, const char* what, const arma::mat& x, int d, arma::uword needed = 1) {
  const arma::uword n = count_along(x, d), outputs = d == 0 ? x.n_cols : x.n_rows;
  if (n >= needed || outputs == 0) return;
  std::string msg = op + ": cannot " + what + " over " + std::to_string(n) + (d == 0 ? " row" : " column") +
                    (n == 1 ? "" : "s") + " (input " + shape_str(x) + ")";
  if (needed > 1) msg += "; it divides by n - 1, so it needs at least " + std::to_string(needed);
  throw Error(msg);
}

// An empty result of the shape a reduction along d keeps: 1 x D down the
// rows, N x 1 across the columns. (Armadillo's mean and max of a 0x0 matrix
// are 0x0 whatever the dim.)
arma::mat empty_along(const arma::mat& x, int d) { return arma::mat(d == 0 ? 1 : x.n_rows, d == 0 ? x.n_cols : 1); }
arma::mat mean_along(const arma::mat& x, int d) { return x.is_empty() ? empty_along(x, d) : arma::mean(x, d); }
arma::mat max_along(const arma::mat& x, int d) { return x.is_empty() ? empty_along(x, d) : arma::max(x, d); }

// The gradient of a reduction, repeated back over the reduced dimension.
arma::mat spread(const arma::mat& g, const arma::mat& like) {
  return expand(g, Shape{like.n_rows, like.n_cols});
}
}  // namespace

// y = sum(a);  da = dy everywhere
Var sum(Var a) {
  Tape& t = tape_of("sum", a);
  return t.record("sum", {a}, arma::mat(1, 1, arma::fill::value(arma::accu(a.value()))),
                  [](Tape& t, const Node& n) {
                    t.accumulate(n.inputs[0], spread(n.grad, t.value(n.inputs[0])));
                  });
}

// y = sum along dim;  da = dy repeated along dim
Var sum(Var a, int dim) {
  Tape& t = tape_of("sum", a);
  const int d = normalize_dim("sum", dim);
  return t.record(along_name("sum", d), {a}, arma::sum(a.value(), d),
                  [](Tape& t, const Node& n) {
                    t.accumulate(n.inputs[0], spread(n.grad, t.value(n.inputs[0])));
                  });
}

// y = sum(a) / n;  da = dy / n everywhere
Var mean(Var a) {
  Tape& t = tape_of("mean", a);
  const arma::mat& x = a.value();
  if (x.n_elem == 0) throw Error("mean: cannot average over 0 elements (input " + shape_str(x) + ")");
  return t.record("mean", {a}, arma::mat(1, 1, arma::fill::value(arma::accu(x) / x.n_elem)),
                  [](Tape& t, const Node& n) {
                    const arma::mat& x = t.value(n.inputs[0]);
                    t.accumulate(n.inputs[0], spread(n.grad / double(x.n_elem), x));
                  });
}

// y = sum along dim / n;  da = dy / n repeated along dim
Var mean(Var a, int dim) {
  Tape& t = tape_of("mean", a);
  const int d = normalize_dim("mean", dim);
  const arma::mat& x = a.value();
  std::string op = along_name("mean", d);
  require_along(op, "average", x, d);
  return t.record(std::move(op), {a}, mean_along(x, d),
                  [d](Tape& t, const Node& n) {
                    const arma::mat& x = t.value(n.inputs[0]);
                    t.accumulate(n.inputs[0], spread(n.grad / double(count_along(x, d)), x));
                  });
}

// y = sum((a - mean)^2) / (n or n-1);  da = dy * 2 (a - mean) / (n or n-1)
Var var(Var a, int dim, bool unbiased) {
  Tape& t = tape_of("var", a);
  const int d = normalize_dim("var", dim);
  const arma::mat& x = a.value();
  std::string op = along_name(unbiased ? "var_unbiased" : "var", d);
  require_along(op, unbiased ? "take the unbiased variance" : "take the variance", x, d, unbiased ? 2 : 1);
  const arma::uword n = count_along(x, d);
  const double denom = unbiased ? double(n) - 1 : double(n);
  // Two passes: centre first, then average the squares.
  const Shape s{x.n_rows, x.n_cols};
  const arma::mat centred = broadcast_apply(x, mean_along(x, d), s, std::minus<>());
  arma::mat y = arma::sum(arma::square(centred), d) / denom;
  return t.record(
      std::move(op), {a}, std::move(y),
      [d, denom](Tape& t, const Node& n) {
        const arma::mat& x = t.value(n.inputs[0]);
        const Shape s{x.n_rows, x.n_cols};
        const arma::mat centred = broadcast_apply(x, mean_along(x, d), s, std::minus<>());
        t.accumulate(n.inputs[0], broadcast_apply(centred, n.grad * (2.0 / denom), s, std::multiplies<>()));
      },
      Saved{{a}});
}

// y = max along dim;  da = dy at the (first) arg-max, 0 elsewhere
Var max(Var a, int dim) {
  Tape& t = tape_of("max", a);
  const int d = normalize_dim("max", dim);
  const arma::mat& x = a.value();
  std::string op = along_name("max", d);
  require_along(op, "take the max", x, d);
  arma::umat where = arma::index_max(x, d);
  const std::size_t bytes = where.n_elem * sizeof(arma::uword);
  return t.record(
      std::move(op), {a}, max_along(x, d),
      [d, where](Tape& t, const Node& n) {
        const arma::mat& x = t.value(n.inputs[0]);
        arma::mat g(arma::size(x), arma::fill::zeros);
        for (arma::uword k = 0; k < where.n_elem; ++k) {
          if (d == 0) g(where(k), k) = n.grad(k);
          else g(k, where(k)) = n.grad(k);
        }
        t.accumulate(n.inputs[0], g);
      },
      Saved{{}, false, bytes});
}

// y = m + log(sum(exp(a - m))), m = max along dim;  da = dy * exp(a - y) (the softmax)
Var logsumexp(Var a, int dim) {
  Tape& t = tape_of("logsumexp", a);
  const int d = normalize_dim("logsumexp", dim);
  const arma::mat& x = a.value();
  std::string op = along_name("logsumexp", d);
  require_along(op, "take the logsumexp", x, d);
  const arma::mat m = max_along(x, d);
  const Shape s{x.n_rows, x.n_cols};
  arma::mat y = m + arma::log(arma::sum(arma::exp(broadcast_apply(x, m, s, std::minus<>())), d));
  return t.record(
      std::move(op), {a}, std::move(y),
      [](Tape& t, const Node& n) {
        const arma::mat& x = t.value(n.inputs[0]);
        const Shape s{x.n_rows, x.n_cols};
        const arma::mat softmax = arma::exp(broadcast_apply(x, n.value, s, std::minus<>()));
        t.accumulate(n.inputs[0], broadcast_apply(softmax, n.grad, s, std::multiplies<>()));
      },
      Saved{{a}, true});
}

}  // namespace ag
