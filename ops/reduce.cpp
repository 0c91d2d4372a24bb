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
  return t.record(d == 0 ? "sum(dim=0)" : "sum(dim=1)", {a}, arma::sum(a.value(), d),
                  [](Tape& t, const Node& n) {
                    t.accumulate(n.inputs[0], spread(n.grad, t.value(n.inputs[0])));
                  });
}

// y = sum(a) / n;  da = dy / n everywhere
Var mean(Var a) {
  Tape& t = tape_of("mean", a);
  const arma::mat& x = a.value();
  if (x.n_elem == 0) throw Error("mean: the input is empty (" + shape_str(x) + ")");
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
  if (count_along(x, d) == 0) throw Error("mean: the input is empty (" + shape_str(x) + ")");
  return t.record(d == 0 ? "mean(dim=0)" : "mean(dim=1)", {a}, arma::mean(x, d),
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
  const arma::uword n = count_along(x, d);
  if (n == 0 || (unbiased && n < 2)) {
    throw Error(std::string("var: ") + (unbiased ? "unbiased variance needs at least 2" : "variance needs at least 1") +
                " elements along dim " + std::to_string(d) + "; the input is " + shape_str(x));
  }
  const double denom = unbiased ? double(n - 1) : double(n);
  // Two passes: centre first, then average the squares.
  const Shape s{x.n_rows, x.n_cols};
  const arma::mat centred = broadcast_apply(x, arma::mean(x, d), s, std::minus<>());
  arma::mat y = arma::sum(arma::square(centred), d) / denom;
  std::string op = std::string(unbiased ? "var_unbiased" : "var") + (d == 0 ? "(dim=0)" : "(dim=1)");
  return t.record(
      std::move(op), {a}, std::move(y),
      [d, denom](Tape& t, const Node& n) {
        const arma::mat& x = t.value(n.inputs[0]);
        const Shape s{x.n_rows, x.n_cols};
        const arma::mat centred = broadcast_apply(x, arma::mean(x, d), s, std::minus<>());
        t.accumulate(n.inputs[0], broadcast_apply(centred, n.grad * (2.0 / denom), s, std::multiplies<>()));
      },
      Saved{{a}});
}

// y = max along dim;  da = dy at the (first) arg-max, 0 elsewhere
Var max(Var a, int dim) {
  Tape& t = tape_of("max", a);
  const int d = normalize_dim("max", dim);
  const arma::mat& x = a.value();
  if (count_along(x, d) == 0) throw Error("max: the input is empty (" + shape_str(x) + ")");
  arma::umat where = arma::index_max(x, d);
  const std::size_t bytes = where.n_elem * sizeof(arma::uword);
  return t.record(
      d == 0 ? "max(dim=0)" : "max(dim=1)", {a}, arma::max(x, d),
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
  if (count_along(x, d) == 0) throw Error("logsumexp: the input is empty (" + shape_str(x) + ")");
  const arma::mat m = arma::max(x, d);
  const Shape s{x.n_rows, x.n_cols};
  arma::mat y = m + arma::log(arma::sum(arma::exp(broadcast_apply(x, m, s, std::minus<>())), d));
  return t.record(
      d == 0 ? "logsumexp(dim=0)" : "logsumexp(dim=1)", {a}, std::move(y),
      [](Tape& t, const Node& n) {
        const arma::mat& x = t.value(n.inputs[0]);
        const Shape s{x.n_rows, x.n_cols};
        const arma::mat softmax = arma::exp(broadcast_apply(x, n.value, s, std::minus<>()));
        t.accumulate(n.inputs[0], broadcast_apply(softmax, n.grad, s, std::multiplies<>()));
      },
      Saved{{a}, true});
}

}  // namespace ag
