#include "assignments/kit/zoo_hints.h"

namespace kit {

namespace {

// A wrong backward a student could have written, rebuilt for this case.
struct Variant {
  std::size_t input;  // whose gradient, in the spec's order of inputs
  NormHint named;
  arma::mat value;
};

const char* const kAccumulate =
    " holds only the last row's contribution: `=` where `+=` belongs in the loop over the rows"
    " (the parameter is shared by every row, so every row adds its part to the gradient).";

arma::mat softmax_rows(const arma::mat& z) {
  arma::mat e = arma::exp(z.each_col() - arma::max(z, 1));
  return e.each_col() / arma::sum(e, 1);
}

// Softmax, dx = y * (dy - sum_j dy_j y_j) per row. The wrong ones most specific first: where
// two agree on a case (one row makes the sum down the columns the diagonal one), the first
// names it.
std::vector<Variant> softmax_zoo(const DrawnCase& c) {
  const arma::mat &y = c.y, &dy = c.dy;
  const arma::vec row_dot = arma::sum(dy % y, 1);
  const arma::vec row_sum = arma::sum(dy, 1);
  return {
      {0, {"missing sum term", "Yours is y * dy: the term - y * sum_j(dy_j y_j) is missing. Each output depends on "
                               "every input of its row (they share the normalisation), so dx_i = y_i (dy_i - sum_j dy_j y_j)."},
       y % dy},
      {0, {"diagonal only", "Yours uses only the Jacobian's diagonal, y_i (1 - y_i). Its off-diagonal entries, "
                            "-y_i y_j, are missing: dx_i = y_i (dy_i - sum_j dy_j y_j)."},
       y % (1 - y) % dy},
      {0, {"wrong sign, sum term", "The sum term has the wrong sign: dx = y * (dy - sum_j dy_j y_j), with a minus."},
       y % (dy.each_col() + row_dot)},
      {0, {"sum without y", "Your sum leaves y out: it is sum_j dy_j y_j (the dot product of dy and y in the row), "
                            "not sum_j dy_j."},
       y % (dy.each_col() - row_sum)},
      {0, {"log-softmax backward", "That is log_softmax's backward, dy - y * sum_j dy_j. Softmax's is "
                                   "y * (dy - sum_j dy_j y_j)."},
       dy - y.each_col() % row_sum},
      {0, {"sum down the columns", "Your sum runs down the columns (over the batch's rows); it belongs across each row: "
                                   "arma::sum(dy % y, 1), a column of N sums."},
       y % (dy.each_row() - arma::sum(dy % y, 0))},
      {0, {"sum over the batch", "Your sum runs over the whole batch (accu); each row has its own: "
                                 "arma::sum(dy % y, 1), one sum per row."},
       y % (dy - arma::accu(dy % y))},
  };
}

// Softmax cross-entropy, the mean over N rows with labels i mod C:
// dz = dy * (softmax(z) - onehot) / N, dy a single number.
std::vector<Variant> cross_entropy_zoo(const DrawnCase& c) {
  const arma::mat& z = c.inputs[0];
  const double n = double(z.n_rows), dy = c.dy(0, 0);
  arma::mat onehot(arma::size(z), arma::fill::zeros);
  for (arma::uword i = 0; i < z.n_rows; ++i) onehot(i, i % z.n_cols) = 1;
  const arma::mat p = softmax_rows(z);
  const arma::mat p_columns = softmax_rows(z.t()).t();
  return {
      {0, {"one-hot missing", "Yours is dy * softmax(z) / N: the label's one-hot is not subtracted. The loss is "
                              "-log p[label], so dz = dy * (softmax(z) - onehot(label)) / N."},
       dy * p / n},
      {0, {"minus one everywhere", "Yours subtracts 1 from every entry; only the label's entry gets the -1: "
                                   "dz = dy * (softmax(z) - onehot(label)) / N."},
       dy * (p - 1) / n},
      {0, {"softmax down the columns", "Your softmax normalises down the columns (over the batch); each row is "
                                       "its own distribution over the C classes: normalise across the row."},
       dy * (p_columns - onehot) / n},
      {0, {"dy left out", "Yours is (softmax(z) - onehot) / N without dy, the gradient arriving from above: "
                          "multiply by it (the chain rule), dz = dy * (softmax(z) - onehot) / N."},
       (p - onehot) / n},
      {0, {"sum, not mean", "Yours is the gradient of the sum over the rows; the loss is their mean, so divide by "
                            "N, the number of rows of z: dz = dy * (softmax(z) - onehot) / N."},
       dy * (p - onehot)},
  };
}

// Y = X W + b: dX = dy W^T, dW = X^T dy, db = the sum of dy's rows.
std::vector<Variant> linear_zoo(const DrawnCase& c) {
  const arma::mat &x = c.inputs[0], &w = c.inputs[1], &dy = c.dy;
  std::vector<Variant> v;
  if (w.n_rows == w.n_cols) {  // a square W: the transposes keep their shape, so only their values tell
    v.push_back({0, {"W not transposed", "Yours is dy W; it is dy W^T (Y = X W, so dY/dX carries W's transpose: "
                                         "an N x M gradient times the M x K matrix W^T gives N x K)."},
                 dy * w});
    v.push_back({1, {"dW transposed", "Yours is dy^T X, the transpose of dW = X^T dy; with K = M both are square, "
                                      "so only the values tell. dW[k][m] = sum_i X[i][k] dy[i][m]."},
                 dy.t() * x});
  }
  v.push_back({2, {"db averaged", "Yours is the mean of dy's rows; db is their sum: b is added to every row, so "
                                  "every row adds its dy to db."},
               arma::mat(arma::mean(dy, 0))});
  v.push_back({2, {"db summed over everything", "Yours sums all of dy into one number; db has one entry per "
                                                "output column: the sum down each column, arma::sum(dy, 0)."},
               arma::mat(1, dy.n_cols, arma::fill::value(arma::accu(dy)))});
  if (dy.n_rows > 1) {  // one row: `=` and `+=` give the same gradient
    v.push_back({2, {"`=` for `+=`", "db" + std::string(kAccumulate)}, arma::mat(dy.row(dy.n_rows - 1))});
    v.push_back({2, {"db from one row", "Yours is dy's first row only; b is added to every row, so db is the sum of "
                                        "all of dy's rows: arma::sum(dy, 0)."},
                 arma::mat(dy.row(0))});
  }
  return v;
}

// BatchNorm in training mode: the statistics are per column (over the batch's N rows).
// dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)), means down each column.
std::vector<Variant> batchnorm_zoo(const ExerciseSpec& s, const DrawnCase& c) {
  const arma::mat &x = c.inputs[0], &gamma = c.inputs[1], &dy = c.dy;
  const double n = double(x.n_rows);
  const arma::mat centred = x.each_row() - arma::mean(x, 0);
  const arma::rowvec var = arma::mean(arma::square(centred), 0);
  const auto rstd_of = [&](const arma::rowvec& v) { return arma::rowvec(1.0 / arma::sqrt(v + s.eps)); };
  const arma::rowvec rstd = rstd_of(var), rstd_unbiased = rstd_of(var * n / (n - 1));
  const arma::mat xhat = centred.each_row() % rstd, xhat_unbiased = centred.each_row() % rstd_unbiased;
  arma::mat dxhat = dy;
  dxhat.each_row() %= gamma;
  // rstd * (g [- mean(g)] - sign * xh * mean(g * xh)), the means down the columns (dim 0) or across the rows (1).
  const auto dx = [](const arma::mat& g, const arma::mat& xh, const arma::rowvec& r, bool mean_term, double sign,
                     int dim = 0) {
    arma::mat t = g;
    if (dim == 0) {
      if (mean_term) t.each_row() -= arma::mean(g, 0);
      t -= sign * (xh.each_row() % arma::mean(g % xh, 0));
    } else {
      if (mean_term) t.each_col() -= arma::mean(g, 1);
      t -= sign * (xh.each_col() % arma::mean(g % xh, 1));
    }
    return arma::mat(t.each_row() % r);
  };
  const arma::uword last = x.n_rows - 1;
  const arma::rowvec ones(x.n_cols, arma::fill::ones);
  std::vector<Variant> v = {
      {0, {"statistics held constant", "Yours is dy * gamma * rstd: it treats the batch's mean and variance as "
                                       "constants. In training mode they are computed from x, so x reaches the output "
                                       "through them too: - mean(dxhat) and - xhat * mean(dxhat * xhat) are missing."},
       dx(dxhat, xhat, rstd, false, 0)},
      {0, {"missing mean term", "The columns of dx should sum to zero (adding a constant to a column of x changes "
                                "nothing in training mode), and yours do not: the mean term - mean(dxhat) is missing."},
       dx(dxhat, xhat, rstd, false, 1)},
      {0, {"missing variance term", "dx should be orthogonal to xhat in each column (scaling a centred column changes "
                                    "nothing), and yours is not: the term - xhat * mean(dxhat * xhat) is missing."},
       dx(dxhat, xhat, rstd, true, 0)},
      {0, {"means across the rows", "Your means run across each row, as LayerNorm's do; BatchNorm's statistics are "
                                    "per column, over the batch: take the means down the columns (arma::mean(., 0))."},
       dx(dxhat, xhat, rstd, true, 1, 1)},
      {0, {"wrong sign, variance term", "The variance term has the wrong sign: it is subtracted, "
                                        "- xhat * mean(dxhat * xhat), so that each column of dx is orthogonal to xhat."},
       dx(dxhat, xhat, rstd, true, -1)},
      {0, {"gamma missing", "gamma is missing in dx: dxhat = dy * gamma (each row times gamma); "
                            "yours is the dx of gamma = 1."},
       dx(dy, xhat, rstd, true, 1)},
      {0, {"rstd missing", "The factor rstd = 1 / sqrt(var + eps) in front of dx is missing."},
       dx(dxhat, xhat, ones, true, 1)},
      {0, {"unbiased variance", "Yours matches a variance divided by N-1 (unbiased, Armadillo's default var()); "
                                "training-mode BatchNorm divides by N, the batch's size."},
       dx(dxhat, xhat_unbiased, rstd_unbiased, true, 1)},
      {1, {"dgamma from x", "dgamma uses x; it must use the normalised xhat: dgamma = sum over rows of dy * xhat."},
       arma::mat(arma::sum(dy % x, 0))},
      {1, {"dgamma from x - mean", "dgamma uses x - mean without the factor rstd; it must use "
                                   "xhat = (x - mean) * rstd."},
       arma::mat(arma::sum(dy % centred, 0))},
      {1, {"dgamma averaged", "Yours is the mean over the batch's rows; dgamma is their sum: gamma multiplies every "
                              "row, so every row adds dy * xhat to it."},
       arma::mat(arma::mean(dy % xhat, 0))},
      {1, {"unbiased variance", "Yours matches a variance divided by N-1 (unbiased, Armadillo's default var()); "
                                "training-mode BatchNorm divides by N, the batch's size."},
       arma::mat(arma::sum(dy % xhat_unbiased, 0))},
      {1, {"`=` for `+=`", "dgamma" + std::string(kAccumulate)}, arma::mat(dy.row(last) % xhat.row(last))},
  };
  return v;
}

// The engine's graph c = a b, t = tanh(c), e = t + c, f = e a, y = f f, walked backward.
std::vector<Variant> engine_zoo(const DrawnCase& c) {
  const arma::mat &a = c.inputs[0], &b = c.inputs[1], &dy = c.dy;
  const arma::mat cc = a % b, t = arma::tanh(cc), e = t + cc, f = e % a;
  // The walk with one rule per op: the tanh's local derivative, y = f f's factor, whether the
  // products' rules are swapped.
  struct Walk {
    arma::mat da, db;
  };
  const auto walk = [&](const arma::mat& tanh_local, double y_factor, bool swapped) {
    const arma::mat df = y_factor * f % dy;
    const arma::mat de = df % (swapped ? e : a);
    const arma::mat da_f = df % (swapped ? a : e);
    const arma::mat dc = de % tanh_local + de;
    return Walk{da_f + dc % (swapped ? a : b), dc % (swapped ? b : a)};
  };
  const arma::mat right_local = 1 - arma::square(t);
  const Walk once = walk(right_local, 1, false), tanh_minus = walk(1 - t, 2, false),
             tanh_input = walk(1 - arma::square(cc), 2, false), swapped = walk(right_local, 2, true),
             right = walk(right_local, 2, false);
  // Every `+=` written `=`: each node keeps the last contribution the reverse walk brings it.
  const arma::mat df_eq = f % dy, de_eq = df_eq % a, dc_eq = de_eq % right_local;
  const char* kTwice = "y = f * f uses f twice, so f receives two contributions, 2 f dy; yours has f dy. ";
  const char* kEquals = "A node used twice must receive both contributions: `+=` into the input's grad, not `=`. ";
  return {
      {0, {"`=` for `+=`", std::string(kEquals) + "With `=`, each node keeps only the last one: f gets f dy, not "
                                                  "2 f dy, c loses its direct path into e, and a keeps only c's."},
       dc_eq % b},
      {1, {"`=` for `+=`", std::string(kEquals) + "With `=`, each node keeps only the last one: f gets f dy, not "
                                                  "2 f dy, and c loses its direct path into e."},
       dc_eq % a},
      {0, {"y = f f counted once", std::string(kTwice) + "Each operand of a product gets its own `+=`, even when "
                                                         "the two are the same node."},
       once.da},
      {1, {"y = f f counted once", std::string(kTwice) + "Each operand of a product gets its own `+=`, even when "
                                                         "the two are the same node."},
       once.db},
      {0, {"a's path through f lost", "a feeds both c = a b and f = e a, so da = (df * e) + (dc * b); yours has only "
                                      "the part through c (an `=` where `+=` belongs, at a)."},
       right.da - 2 * f % dy % e},
      {0, {"a's path through c lost", "a feeds both c = a b and f = e a, so da = (df * e) + (dc * b); yours has only "
                                      "the part through f (an `=` where `+=` belongs, at a)."},
       arma::mat(2 * f % dy % e)},
      {0, {"tanh derivative", "tanh'(c) = 1 - tanh(c)^2, the square of the output; yours uses 1 - tanh(c)."},
       tanh_minus.da},
      {1, {"tanh derivative", "tanh'(c) = 1 - tanh(c)^2, the square of the output; yours uses 1 - tanh(c)."},
       tanh_minus.db},
      {0, {"tanh derivative from c", "tanh'(c) = 1 - tanh(c)^2, from the output t = tanh(c); yours uses 1 - c^2, "
                                     "the input squared."},
       tanh_input.da},
      {1, {"tanh derivative from c", "tanh'(c) = 1 - tanh(c)^2, from the output t = tanh(c); yours uses 1 - c^2, "
                                     "the input squared."},
       tanh_input.db},
      {0, {"product rule swapped", "For a product p = u v, du = dp * v (the other operand) and dv = dp * u; yours "
                                   "multiplies each input's gradient by its own value."},
       swapped.da},
      {1, {"product rule swapped", "For a product p = u v, du = dp * v (the other operand) and dv = dp * u; yours "
                                   "multiplies each input's gradient by its own value."},
       swapped.db},
  };
}

std::vector<Variant> variants(const ExerciseSpec& s, const DrawnCase& c) {
  if (s.hints == "softmax") return c.y.is_empty() ? std::vector<Variant>{} : softmax_zoo(c);
  if (s.hints == "cross_entropy") return cross_entropy_zoo(c);
  if (s.hints == "linear") return linear_zoo(c);
  if (s.hints == "batchnorm") return batchnorm_zoo(s, c);
  if (s.hints == "engine") return engine_zoo(c);
  return {};
}

}  // namespace

const std::vector<std::string>& zoo_names() {
  static const std::vector<std::string> names = {"softmax", "cross_entropy", "linear", "batchnorm", "engine"};
  return names;
}

NormHint zoo_hint(const ExerciseSpec& spec, const DrawnCase& c, std::size_t k, const arma::mat& yours) {
  if (spec.hints == "cross_entropy" && k == 0 && !yours.is_finite() && c.inputs[0].is_finite()) {
    return {"overflow", "Yours is not finite where the loss is: exp(z) overflows for large logits. Subtract each "
                        "row's largest z before exp (softmax does not change), as the forward does."};
  }
  for (const Variant& v : variants(spec, c)) {
    if (v.input == k && arma::size(v.value) == arma::size(yours) && ag::diagnose_gradient(yours, v.value).correct()) {
      return v.named;
    }
  }
  return {};
}

}  // namespace kit
