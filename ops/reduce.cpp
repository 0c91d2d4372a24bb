#include "ops/reduce.h"

#include <functional>

#include "ops/broadcast.h"
#include "ops/elementwise.h"

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

// A mean, variance, max or logsumexp of nothing has no value (a sum of nothing
// is 0): throws unless every output element summarises at least `needed`
// values. An output with no elements (0 rows reduced across, say) needs none.
void require_along(const char* op, const char* what, const arma::mat& x, int d, arma::uword needed = 1) {
  const arma::uword n = count_along(x, d), outputs = d == 0 ? x.n_cols : x.n_rows;
  if (n >= needed || outputs == 0) return;
  std::string msg = std::string(op) + ": cannot " + what + " over " + std::to_string(n) + (d == 0 ? " row" : " column") +
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

using J = const JvpArgs&;

// The gradient of a reduction, repeated back over the reduced dimension.
arma::mat spread(const arma::mat& g, const arma::mat& like) {
  return expand(g, Shape{like.n_rows, like.n_cols});
}
}  // namespace


// ---- over everything ---------------------------------------------------------

const OpDef& sum_def() {
  static const OpDef def{"sum", 1, "y = sum of all a  (1x1)", "da = dy everywhere", "dy = sum of all da",
                         [](J j) { return sum(j.dx[0]); }};
  return def;
}
Var sum(Var a) {
  const OpDef& def = sum_def();
  Tape& t = tape_of(def.name, a);
  return t.record(def, {a}, arma::mat(1, 1, arma::fill::value(arma::accu(a.value()))),
                  [](Tape& t, const Node& n) {
                    t.accumulate(n.inputs[0], spread(n.grad, t.value(n.inputs[0])));
                  });
}

const OpDef& mean_def() {
  static const OpDef def{"mean", 1, "y = sum of all a / n", "da = dy / n", "dy = sum of all da / n",
                         [](J j) { return mean(j.dx[0]); }};
  return def;
}
Var mean(Var a) {
  const OpDef& def = mean_def();
  Tape& t = tape_of(def.name, a);
  const arma::mat& x = a.value();
  if (x.n_elem == 0) throw Error(std::string(def.name) + ": cannot average over 0 elements (input " + shape_str(x) + ")");
  return t.record(def, {a}, arma::mat(1, 1, arma::fill::value(arma::accu(x) / x.n_elem)),
                  [](Tape& t, const Node& n) {
                    const arma::mat& x = t.value(n.inputs[0]);
                    t.accumulate(n.inputs[0], spread(n.grad / double(x.n_elem), x));
                  });
}

// ---- along a dim: two defs each, [0] down the columns, [1] across the rows ---------

const OpDef& sum_def(int dim) {
  static const OpDef defs[2] = {
      {"sum(dim=0)", 1, "y_j = sum_i a_ij  (1xD)", "da_ij = dy_j", "dy_j = sum_i da_ij",
       [](J j) { return sum(j.dx[0], 0); }},
      {"sum(dim=1)", 1, "y_i = sum_j a_ij  (Nx1)", "da_ij = dy_i", "dy_i = sum_j da_ij",
       [](J j) { return sum(j.dx[0], 1); }}};
  return defs[normalize_dim(sum_def().name, dim)];
}
Var sum(Var a, int dim) {
  const OpDef& def = sum_def(dim);
  Tape& t = tape_of(def.name, a);
  return t.record(def, {a}, arma::sum(a.value(), normalize_dim(def.name, dim)), [](Tape& t, const Node& n) {
    t.accumulate(n.inputs[0], spread(n.grad, t.value(n.inputs[0])));
  });
}

const OpDef& mean_def(int dim) {
  static const OpDef defs[2] = {
      {"mean(dim=0)", 1, "y_j = mean_i a_ij", "da_ij = dy_j / N", "dy_j = mean_i da_ij",
       [](J j) { return mean(j.dx[0], 0); }},
      {"mean(dim=1)", 1, "y_i = mean_j a_ij", "da_ij = dy_i / D", "dy_i = mean_j da_ij",
       [](J j) { return mean(j.dx[0], 1); }}};
  return defs[normalize_dim(mean_def().name, dim)];
}
Var mean(Var a, int dim) {
  const OpDef& def = mean_def(dim);
  Tape& t = tape_of(def.name, a);
  const int d = normalize_dim(def.name, dim);
  const arma::mat& x = a.value();
  require_along(def.name, "average", x, d);
  return t.record(def, {a}, mean_along(x, d), [d](Tape& t, const Node& n) {
    const arma::mat& x = t.value(n.inputs[0]);
    t.accumulate(n.inputs[0], spread(n.grad / double(count_along(x, d)), x));
  });
}

namespace {
// The variance's tangent: 2 sum((a - mean) da) / (n or n - 1) along d.
JvpFn var_rule(int d, bool unbiased) {
  return [d, unbiased](J j) {
    const double n = double(count_along(j.x[0].value(), d));
    return (2.0 / (unbiased ? n - 1 : n)) * sum((j.x[0] - mean(j.x[0], d)) * j.dx[0], d);
  };
}
}  // namespace

const OpDef& var_def(int dim, bool unbiased) {
  static const OpDef biased[2] = {
      {"var(dim=0)", 1, "y_j = mean_i (a_ij - m_j)^2", "da_ij = dy_j 2 (a_ij - m_j) / N",
       "dy_j = 2 mean_i (a_ij - m_j) da_ij", var_rule(0, false)},
      {"var(dim=1)", 1, "y_i = mean_j (a_ij - m_i)^2", "da_ij = dy_i 2 (a_ij - m_i) / D",
       "dy_i = 2 mean_j (a_ij - m_i) da_ij", var_rule(1, false)}};
  static const OpDef unbiased_defs[2] = {
      {"var_unbiased(dim=0)", 1, "y_j = sum_i (a_ij - m_j)^2 / (N-1)", "da_ij = dy_j 2 (a_ij - m_j) / (N-1)",
       "dy_j = 2 sum_i (a_ij - m_j) da_ij / (N-1)", var_rule(0, true)},
      {"var_unbiased(dim=1)", 1, "y_i = sum_j (a_ij - m_i)^2 / (D-1)", "da_ij = dy_i 2 (a_ij - m_i) / (D-1)",
       "dy_i = 2 sum_j (a_ij - m_i) da_ij / (D-1)", var_rule(1, true)}};
  return (unbiased ? unbiased_defs : biased)[normalize_dim("var", dim)];
}
Var var(Var a, int dim, bool unbiased) {
  const OpDef& def = var_def(dim, unbiased);
  Tape& t = tape_of(def.name, a);
  const int d = normalize_dim(def.name, dim);
  const arma::mat& x = a.value();
  require_along(def.name, unbiased ? "take the unbiased variance" : "take the variance", x, d, unbiased ? 2 : 1);
  const arma::uword n = count_along(x, d);
  const double denom = unbiased ? double(n) - 1 : double(n);
  // Two passes: centre first, then average the squares.
  const Shape s{x.n_rows, x.n_cols};
  const arma::mat centred = broadcast_apply(x, mean_along(x, d), s, std::minus<>());
  arma::mat y = arma::sum(arma::square(centred), d) / denom;
  return t.record(
      def, {a}, std::move(y),
      [d, denom](Tape& t, const Node& n) {
        const arma::mat& x = t.value(n.inputs[0]);
        const Shape s{x.n_rows, x.n_cols};
        const arma::mat centred = broadcast_apply(x, mean_along(x, d), s, std::minus<>());
        t.accumulate(n.inputs[0], broadcast_apply(centred, n.grad * (2.0 / denom), s, std::multiplies<>()));
      },
      Saved{{a}});
}


namespace {
// The first maximum along d, as backward and the tangent both read it.
arma::umat arg_max(const arma::mat& x, int d) { return x.is_empty() ? arma::umat() : arma::umat(arma::index_max(x, d)); }

// dy = da at the arg-max: da picked out by a constant one-hot of x's shape.
JvpFn max_rule(int d) {
  return [d](J j) {
    const arma::mat& x = j.x[0].value();
    const arma::umat where = arg_max(x, d);
    arma::mat pick(arma::size(x), arma::fill::zeros);
    for (arma::uword k = 0; k < where.n_elem; ++k) (d == 0 ? pick(where(k), k) : pick(k, where(k))) = 1.0;
    return sum(j.dx[0] * j.tape.constant(pick, "arg-max"), d);
  };
}
}  // namespace

const OpDef& max_def(int dim) {
  static const OpDef defs[2] = {
      {"max(dim=0)", 1, "y_j = max_i a_ij", "da = dy at the arg-max, 0 elsewhere", "dy = da at the arg-max",
       max_rule(0)},
      {"max(dim=1)", 1, "y_i = max_j a_ij", "da = dy at the arg-max, 0 elsewhere", "dy = da at the arg-max",
       max_rule(1)}};
  return defs[normalize_dim("max", dim)];
}
Var max(Var a, int dim) {
  const OpDef& def = max_def(dim);
  Tape& t = tape_of(def.name, a);
  const int d = normalize_dim(def.name, dim);
  const arma::mat& x = a.value();
  require_along(def.name, "take the max", x, d);
  arma::umat where = arg_max(x, d);
  const std::size_t bytes = where.n_elem * sizeof(arma::uword);
  return t.record(
      def, {a}, max_along(x, d),
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

namespace {
// dy = sum(softmax(a) da) along d, softmax(a) = exp(a - y).
JvpFn logsumexp_rule(int d) { return [d](J j) { return sum(exp(j.x[0] - j.y) * j.dx[0], d); }; }
}  // namespace

// m = max along dim, subtracted first so exp never overflows.
const OpDef& logsumexp_def(int dim) {
  static const OpDef defs[2] = {
      {"logsumexp(dim=0)", 1, "y_j = m_j + log sum_i exp(a_ij - m_j)", "da_ij = dy_j softmax(a)_ij",
       "dy_j = sum_i softmax(a)_ij da_ij", logsumexp_rule(0)},
      {"logsumexp(dim=1)", 1, "y_i = m_i + log sum_j exp(a_ij - m_i)", "da_ij = dy_i softmax(a)_ij",
       "dy_i = sum_j softmax(a)_ij da_ij", logsumexp_rule(1)}};
  return defs[normalize_dim("logsumexp", dim)];
}
Var logsumexp(Var a, int dim) {
  const OpDef& def = logsumexp_def(dim);
  Tape& t = tape_of(def.name, a);
  const int d = normalize_dim(def.name, dim);
  const arma::mat& x = a.value();
  require_along(def.name, "take the logsumexp", x, d);
  const arma::mat m = max_along(x, d);
  const Shape s{x.n_rows, x.n_cols};
  arma::mat y = m + arma::log(arma::sum(arma::exp(broadcast_apply(x, m, s, std::minus<>())), d));
  return t.record(
      def, {a}, std::move(y),
      [](Tape& t, const Node& n) {
        const arma::mat& x = t.value(n.inputs[0]);
        const Shape s{x.n_rows, x.n_cols};
        const arma::mat softmax = arma::exp(broadcast_apply(x, n.value, s, std::minus<>()));
        t.accumulate(n.inputs[0], broadcast_apply(softmax, n.grad, s, std::multiplies<>()));
      },
      Saved{{a}, true});
}

}  // namespace ag
