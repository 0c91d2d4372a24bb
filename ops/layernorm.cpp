#include "ops/layernorm.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "ops/ops.h"

namespace ag {

namespace {

// gamma (and beta) must be 1 x D, eps a positive number, and there must be at
// least `min_count` values to normalise over along `dim` (1: a row, 0: a column).
void check_norm_args(const char* op, Var x, Var gamma, const Var* beta, double eps, int dim,
                     arma::uword min_count) {
  const arma::mat& v = x.value();
  const std::string shapes = "x is " + shape_str(v);
  auto check_row = [&](const char* name, Var p) {
    if (p.rows() != 1 || p.cols() != v.n_cols) {
      throw Error(std::string(op) + ": " + name + " must be " + shape_str(1, v.n_cols) +
                  " (one value per column of x; " + shapes + "), got " + p.shape());
    }
  };
  check_row("gamma", gamma);
  if (beta != nullptr) check_row("beta", *beta);
  if (!(eps > 0) || !std::isfinite(eps)) {
    std::ostringstream got;  // %g-style: -1e-09 must not print as -0.000000
    got << eps;
    throw Error(std::string(op) + ": eps must be a positive number, got " + got.str());
  }
  const arma::uword count = dim == 1 ? v.n_cols : v.n_rows;
  if (count < min_count || v.n_elem == 0) {
    throw Error(std::string(op) + ": needs at least " + std::to_string(min_count) +
                (dim == 1 ? " features (columns) per row" : " samples (rows) per column") +
                " to normalise over; " + shapes);
  }
}

// mean(x) along dim, with its own rounding error added back: mean(x - m) is
// zero in exact arithmetic, but in doubles it recovers what the first sum lost,
// so a constant row centres to exactly 0 (and y to exactly beta).
Var exact_mean(Var x, int dim) {
  Var first = mean(x, dim);
  return first + mean(x - first, dim);
}

// (x - mean) / sqrt(var + eps) * gamma + beta along dim, one primitive per step.
NormSteps normalise_composed(Var x, Var gamma, Var beta, double eps, int dim) {
  NormSteps s;
  Var mu = exact_mean(x, dim);            // N x 1 per row (dim 1), 1 x D per column (dim 0)
  Var diff = x - mu;                      // broadcast: each row (column) minus its mean
  Var squares = square(diff);
  Var variance = mean(squares, dim);      // biased: divide by the count, not count - 1
  Var variance_eps = variance + eps;      // eps inside the square root
  Var stdev = sqrt(variance_eps);
  Var norm = diff / stdev;
  s.y = norm * gamma + beta;              // gamma, beta: 1 x D, broadcast down the rows
  s.steps = {{"mean", mu},
             {"x - mean", diff},
             {"(x - mean)^2", squares},
             {"variance", variance},
             {"variance + eps", variance_eps},
             {"std = sqrt(variance + eps)", stdev},
             {"normalised = (x - mean) / std", norm},
             {"y = gamma * normalised + beta", s.y}};
  return s;
}

}  // namespace

// ---- LayerNorm, composed: the tape derives the backward ---------------------

// y = (x - mean) / sqrt(var + eps) * gamma + beta, each row; var biased (divide by D).
NormSteps layernorm_composed_steps(Var x, Var gamma, Var beta, double eps) {
  check_norm_args("layernorm_composed", x, gamma, &beta, eps, 1, 2);
  return normalise_composed(x, gamma, beta, eps, -1);
}

Var layernorm_composed(Var x, Var gamma, Var beta, double eps) {
  return layernorm_composed_steps(x, gamma, beta, eps).y;
}

// ---- LayerNorm, fused: one node, handwritten backward -----------------------
//
// The kernels walk memory in storage order. Armadillo is column-major, so each
// inner loop runs down one column (contiguous, vectorised) while per-row
// accumulators (N doubles: sums, mean, rstd) stay in cache. Every pass is a
// straight sweep the hardware prefetcher can follow; blocking the rows instead
// measured slower, because a block turns each column into a short strided run.

namespace {

// Per-row mean and rstd = 1 / sqrt(var + eps) in one sweep over x, never
// E[x^2] - E[x]^2: the sums are of d = x - shift, with shift = the row's first
// value. Then var = mean(d^2) - mean(d)^2 loses at most a factor
// (mean - shift)^2 / var <= D of precision (~1e-13 relative for D = 768),
// however large the offset: a row at 1e8 + noise is as accurate as the noise
// alone, and a constant row gives d = 0, so mean = shift exactly and y = beta.
// One sweep instead of two: the forward reads x twice (stats, output), not three times.
void layernorm_stats(const arma::mat& x, double eps, arma::vec& mean, arma::vec& rstd) {
  const arma::uword N = x.n_rows, D = x.n_cols;
  arma::vec sum_d(N, arma::fill::zeros), sum_d2(N, arma::fill::zeros);
  mean.set_size(N);
  rstd.set_size(N);
  const double* shift = x.colptr(0);
  double* s1 = sum_d.memptr();
  double* s2 = sum_d2.memptr();
  for (arma::uword j = 1; j < D; ++j) {  // column 0 is the shift: its d is 0
    const double* xj = x.colptr(j);
    for (arma::uword i = 0; i < N; ++i) {
      const double d = xj[i] - shift[i];
      s1[i] += d;
      s2[i] += d * d;
    }
  }
  for (arma::uword i = 0; i < N; ++i) {
    const double mean_d = s1[i] / double(D);
    mean[i] = shift[i] + mean_d;
    const double var = std::max(0.0, s2[i] / double(D) - mean_d * mean_d);  // biased
    rstd[i] = 1.0 / std::sqrt(var + eps);
  }
}

// y = (x - mean) * rstd * gamma + beta; fills mean and rstd.
arma::mat layernorm_forward(const arma::mat& x, const arma::mat& gamma, const arma::mat& beta,
                            double eps, arma::vec& mean, arma::vec& rstd) {
  layernorm_stats(x, eps, mean, rstd);
  arma::mat y(x.n_rows, x.n_cols, arma::fill::none);
  const double* m = mean.memptr();
  const double* s = rstd.memptr();
  for (arma::uword j = 0; j < x.n_cols; ++j) {
    const double* xj = x.colptr(j);
    double* yj = y.colptr(j);
    const double gj = gamma(j), bj = beta(j);
    for (arma::uword i = 0; i < x.n_rows; ++i) yj[i] = (xj[i] - m[i]) * s[i] * gj + bj;
  }
  return y;
}

struct NormGrads {
  arma::mat dx, dgamma, dbeta;  // dx left empty when x needs no gradient
};

// llm.c's layernorm_backward, one column at a time: the first sweep gathers
// dgamma, dbeta and the two per-row means of dnorm; the second writes dx.
void layernorm_backward(const arma::mat& x, const arma::mat& gamma, const arma::mat& dout,
                        const arma::vec& mean, const arma::vec& rstd, NormGrads& g) {
  const arma::uword N = x.n_rows, D = x.n_cols;
  arma::vec dnorm_mean(N, arma::fill::zeros), dnorm_norm_mean(N, arma::fill::zeros);
  const double* m = mean.memptr();
  const double* s = rstd.memptr();
  double* a = dnorm_mean.memptr();
  double* b = dnorm_norm_mean.memptr();
  for (arma::uword j = 0; j < D; ++j) {
    const double* xj = x.colptr(j);
    const double* dj = dout.colptr(j);
    const double gj = gamma(j);
    double dgamma = 0, dbeta = 0;
    for (arma::uword i = 0; i < N; ++i) {
      const double norm = (xj[i] - m[i]) * s[i];  // recomputed, not saved
      const double dnorm = dj[i] * gj;             // through y = gamma * norm + beta
      dgamma += dj[i] * norm;                      // dgamma_j = sum over rows of dout * norm
      dbeta += dj[i];                              // dbeta_j = sum over rows of dout
      a[i] += dnorm;                               // sum_j dnorm        (the mean's path)
      b[i] += dnorm * norm;                        // sum_j dnorm * norm (the variance's path)
    }
    g.dgamma(j) += dgamma;
    g.dbeta(j) += dbeta;
  }
  if (g.dx.is_empty()) return;
  dnorm_mean /= double(D);
  dnorm_norm_mean /= double(D);
  for (arma::uword j = 0; j < D; ++j) {
    const double* xj = x.colptr(j);
    const double* dj = dout.colptr(j);
    double* dxj = g.dx.colptr(j);
    const double gj = gamma(j);
    for (arma::uword i = 0; i < N; ++i) {
      const double norm = (xj[i] - m[i]) * s[i];
      double dval = dj[i] * gj;  // term 1: dnorm, straight through norm = (x - mean) * rstd
      dval -= a[i];              // term 2: through the mean
      dval -= norm * b[i];       // term 3: through the variance (rstd)
      dxj[i] = dval * s[i];      // final scale by rstd
    }
  }
}

}  // namespace

// y = (x - mean) * rstd * gamma + beta, rstd = 1 / sqrt(var + eps); saves mean and rstd only.
Var layernorm_fused(Var x, Var gamma, Var beta, double eps) {
  Tape& t = tape_of("layernorm_fused", x, gamma);
  tape_of("layernorm_fused", x, beta);
  check_norm_args("layernorm_fused", x, gamma, &beta, eps, 1, 2);
  arma::vec mean, rstd;
  arma::mat y = layernorm_forward(x.value(), gamma.value(), beta.value(), eps, mean, rstd);
  const std::size_t bytes = (mean.n_elem + rstd.n_elem) * sizeof(double);
  Var out = t.record(
      "layernorm_fused", {x, gamma, beta}, std::move(y),
      [mean = std::move(mean), rstd = std::move(rstd)](Tape& t, const Node& n) {
        const arma::mat& x = t.value(n.inputs[0]);
        const arma::uword D = x.n_cols;
        NormGrads g{arma::mat(), arma::mat(1, D, arma::fill::zeros), arma::mat(1, D, arma::fill::zeros)};
        if (t.node(n.inputs[0]).requires_grad) g.dx.set_size(x.n_rows, D);
        layernorm_backward(x, t.value(n.inputs[1]), n.grad, mean, rstd, g);
        if (!g.dx.is_empty()) t.accumulate(n.inputs[0], std::move(g.dx));  // moved: no N x D copy
        t.accumulate(n.inputs[1], std::move(g.dgamma));
        t.accumulate(n.inputs[2], std::move(g.dbeta));
      },
      Saved{{x, gamma}, false, bytes});
  t.set_attribute(out, "eps", eps);  // the per-node check replays the forward with it
  return out;
}

// ---- RMSNorm, composed ------------------------------------------------------

// y = x / sqrt(mean(x^2) + eps) * gamma, each row: no centring, no beta.
NormSteps rmsnorm_composed_steps(Var x, Var gamma, double eps) {
  check_norm_args("rmsnorm_composed", x, gamma, nullptr, eps, 1, 1);
  NormSteps s;
  Var squares = square(x);
  Var mean_square = mean(squares, -1);    // N x 1
  Var mean_square_eps = mean_square + eps;
  Var rms = sqrt(mean_square_eps);
  Var norm = x / rms;
  s.y = norm * gamma;
  s.steps = {{"x^2", squares},
             {"mean(x^2)", mean_square},
             {"mean(x^2) + eps", mean_square_eps},
             {"rms = sqrt(mean(x^2) + eps)", rms},
             {"normalised = x / rms", norm},
             {"y = gamma * normalised", s.y}};
  return s;
}

Var rmsnorm_composed(Var x, Var gamma, double eps) { return rmsnorm_composed_steps(x, gamma, eps).y; }

// ---- RMSNorm, fused ---------------------------------------------------------

namespace {

// y = x * rstd * gamma, rstd = 1 / sqrt(mean(x^2) + eps); fills rstd.
arma::mat rmsnorm_forward(const arma::mat& x, const arma::mat& gamma, double eps, arma::vec& rstd) {
  const arma::uword N = x.n_rows, D = x.n_cols;
  rstd.zeros(N);
  double* s = rstd.memptr();
  for (arma::uword j = 0; j < D; ++j) {
    const double* xj = x.colptr(j);
    for (arma::uword i = 0; i < N; ++i) s[i] += xj[i] * xj[i];
  }
  for (arma::uword i = 0; i < N; ++i) s[i] = 1.0 / std::sqrt(s[i] / double(D) + eps);
  arma::mat y(N, D, arma::fill::none);
  for (arma::uword j = 0; j < D; ++j) {
    const double* xj = x.colptr(j);
    double* yj = y.colptr(j);
    const double gj = gamma(j);
    for (arma::uword i = 0; i < N; ++i) yj[i] = xj[i] * s[i] * gj;
  }
  return y;
}

// As layernorm_backward, without the mean's path and without beta.
void rmsnorm_backward(const arma::mat& x, const arma::mat& gamma, const arma::mat& dout,
                      const arma::vec& rstd, NormGrads& g) {
  const arma::uword N = x.n_rows, D = x.n_cols;
  arma::vec dnorm_norm_mean(N, arma::fill::zeros);
  const double* s = rstd.memptr();
  double* b = dnorm_norm_mean.memptr();
  for (arma::uword j = 0; j < D; ++j) {
    const double* xj = x.colptr(j);
    const double* dj = dout.colptr(j);
    const double gj = gamma(j);
    double dgamma = 0;
    for (arma::uword i = 0; i < N; ++i) {
      const double norm = xj[i] * s[i];
      dgamma += dj[i] * norm;       // dgamma_j = sum over rows of dout * norm
      b[i] += dj[i] * gj * norm;    // sum_j dnorm * norm (the rms's path)
    }
    g.dgamma(j) += dgamma;
  }
  if (g.dx.is_empty()) return;
  dnorm_norm_mean /= double(D);
  for (arma::uword j = 0; j < D; ++j) {
    const double* xj = x.colptr(j);
    const double* dj = dout.colptr(j);
    double* dxj = g.dx.colptr(j);
    const double gj = gamma(j);
    for (arma::uword i = 0; i < N; ++i) {
      const double norm = xj[i] * s[i];
      double dval = dj[i] * gj;  // term 1: dnorm, straight through norm = x * rstd
      dval -= norm * b[i];       // term 2: through the rms (rstd)
      dxj[i] = dval * s[i];      // final scale by rstd
    }
  }
}

}  // namespace

// y = x * rstd * gamma, rstd = 1 / sqrt(mean(x^2) + eps); saves rstd only.
Var rmsnorm_fused(Var x, Var gamma, double eps) {
  Tape& t = tape_of("rmsnorm_fused", x, gamma);
  check_norm_args("rmsnorm_fused", x, gamma, nullptr, eps, 1, 1);
  arma::vec rstd;
  arma::mat y = rmsnorm_forward(x.value(), gamma.value(), eps, rstd);
  const std::size_t bytes = rstd.n_elem * sizeof(double);
  Var out = t.record(
      "rmsnorm_fused", {x, gamma}, std::move(y),
      [rstd = std::move(rstd)](Tape& t, const Node& n) {
        const arma::mat& x = t.value(n.inputs[0]);
        NormGrads g{arma::mat(), arma::mat(1, x.n_cols, arma::fill::zeros), arma::mat()};
        if (t.node(n.inputs[0]).requires_grad) g.dx.set_size(arma::size(x));
        rmsnorm_backward(x, t.value(n.inputs[1]), n.grad, rstd, g);
        if (!g.dx.is_empty()) t.accumulate(n.inputs[0], std::move(g.dx));  // moved: no N x D copy
        t.accumulate(n.inputs[1], std::move(g.dgamma));
      },
      Saved{{x, gamma}, false, bytes});
  t.set_attribute(out, "eps", eps);  // the per-node check replays the forward with it
  return out;
}

// ---- BatchNorm (training mode), composed --------------------------------------

// y = (x - mean) / sqrt(var + eps) * gamma + beta, each COLUMN: statistics over the batch.
Var batchnorm_composed(Var x, Var gamma, Var beta, double eps) {
  check_norm_args("batchnorm_composed", x, gamma, &beta, eps, 0, 2);
  return normalise_composed(x, gamma, beta, eps, 0).y;
}

}  // namespace ag
