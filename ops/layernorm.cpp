#include "ops/layernorm.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "ops/ops.h"

namespace ag {

namespace {

// gamma (and beta) must be 1 x D, eps a positive number, and there must be at
// least `min_count` values to normalise over along `dim` (1: a row, 0: a column).
// Nothing to normalise (no rows for dim 1, no columns for dim 0) is fine: the
// result is empty.
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
  if (count < min_count) {
    const char* what = dim == 0        ? " samples (rows) per column"
                       : min_count == 1 ? " feature (column) per row"
                                        : " features (columns) per row";
    throw Error(std::string(op) + ": needs at least " + std::to_string(min_count) + what +
                " to normalise over; " + shapes);
  }
}

// mean(x) along dim; Centring::Corrected adds back its rounding error (see layernorm.h).
Var centre(Var x, int dim, Centring centring) {
  Var first = mean(x, dim);
  if (centring == Centring::Plain) return first;
  return first + mean(x - first, dim);
}

// (x - mean) / sqrt(var + eps) * gamma + beta along dim, one primitive per step,
// in the seeds' order: mean, var(unbiased=False), (x - mean) / sqrt(var + eps), gamma * norm + beta.
NormSteps normalise_composed(Var x, Var gamma, Var beta, double eps, int dim, Centring centring) {
  NormSteps s;
  Var mu = centre(x, dim, centring);          // N x 1 per row (dim 1), 1 x D per column (dim 0)
  Var variance = var(x, dim, false);          // biased: divide by the count, not count - 1
  Var diff = x - mu;                          // broadcast: each row (column) minus its mean
  Var variance_eps = variance + eps;          // eps inside the square root
  Var stdev = sqrt(variance_eps);
  s.norm = diff / stdev;
  Var scaled = s.norm * gamma;                // gamma, beta: 1 x D, broadcast down the rows
  s.y = scaled + beta;
  s.steps = {{"mean", mu},
             {"variance", variance},
             {"x - mean", diff},
             {"variance + eps", variance_eps},
             {"std = sqrt(variance + eps)", stdev},
             {"normalised = (x - mean) / std", s.norm},
             {"gamma * normalised", scaled},
             {"y = gamma * normalised + beta", s.y}};
  return s;
}

}  // namespace

// ---- LayerNorm, composed: the tape derives the backward ---------------------

// y = (x - mean) / sqrt(var + eps) * gamma + beta, each row; var biased (divide by D).
NormSteps layernorm_composed_steps(Var x, Var gamma, Var beta, double eps, Centring centring) {
  check_norm_args("layernorm_composed", x, gamma, &beta, eps, 1, 2);
  return normalise_composed(x, gamma, beta, eps, -1, centring);
}

Var layernorm_composed(Var x, Var gamma, Var beta, double eps, Centring centring) {
  return layernorm_composed_steps(x, gamma, beta, eps, centring).y;
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
  arma::vec sum_d(N, arma::fill::zeros), sum_d2(N, arma::fill::zeros);  // per row: sum d, sum d^2
  mean.set_size(N);
  rstd.set_size(N);
  if (N == 0) return;  // no rows: nothing to sweep (and colptr of an empty matrix is a null reference)
  const double* shift = x.colptr(0);
  for (arma::uword j = 1; j < D; ++j) {  // column 0 is the shift: its d is 0
    const double* x_j = x.colptr(j);
    for (arma::uword i = 0; i < N; ++i) {
      const double d = x_j[i] - shift[i];
      sum_d[i] += d;
      sum_d2[i] += d * d;
    }
  }
  for (arma::uword i = 0; i < N; ++i) {
    const double mean_d = sum_d[i] / double(D);
    mean[i] = shift[i] + mean_d;
    const double var = std::max(0.0, sum_d2[i] / double(D) - mean_d * mean_d);  // biased
    rstd[i] = 1.0 / std::sqrt(var + eps);
  }
}

// y = norm * gamma + beta, norm = (x - mean) * rstd; fills mean and rstd.
arma::mat layernorm_forward(const arma::mat& x, const arma::mat& gamma, const arma::mat& beta,
                            double eps, arma::vec& mean, arma::vec& rstd) {
  layernorm_stats(x, eps, mean, rstd);
  arma::mat y(x.n_rows, x.n_cols, arma::fill::none);
  if (x.n_rows == 0) return y;
  for (arma::uword j = 0; j < x.n_cols; ++j) {
    const double* x_j = x.colptr(j);
    double* y_j = y.colptr(j);
    const double gamma_j = gamma(j), beta_j = beta(j);
    for (arma::uword i = 0; i < x.n_rows; ++i) {
      const double norm = (x_j[i] - mean[i]) * rstd[i];  // normalise
      y_j[i] = norm * gamma_j + beta_j;                   // scale and shift
    }
  }
  return y;
}

struct NormGrads {
  arma::mat dx, dgamma, dbeta;  // dx left empty when x needs no gradient
};

// llm.c's layernorm_backward, one column at a time: the first sweep gathers
// dgamma, dbeta and the two per-row means of dnorm; the second writes
//   dx = rstd * (dnorm - dnorm_mean - norm * dnorm_norm_mean),  dnorm = dout * gamma.
void layernorm_backward(const arma::mat& x, const arma::mat& gamma, const arma::mat& dout,
                        const arma::vec& mean, const arma::vec& rstd, NormGrads& g) {
  const arma::uword N = x.n_rows, D = x.n_cols;
  if (N == 0) return;  // no rows: dgamma and dbeta stay 0, dx is empty
  arma::vec dnorm_mean(N, arma::fill::zeros), dnorm_norm_mean(N, arma::fill::zeros);  // per row
  for (arma::uword j = 0; j < D; ++j) {
    const double* x_j = x.colptr(j);
    const double* dout_j = dout.colptr(j);
    const double gamma_j = gamma(j);
    double dgamma_j = 0, dbeta_j = 0;
    for (arma::uword i = 0; i < N; ++i) {
      const double norm = (x_j[i] - mean[i]) * rstd[i];  // recomputed, not saved
      const double dnorm = dout_j[i] * gamma_j;            // through y = gamma * norm + beta
      dgamma_j += dout_j[i] * norm;                        // dgamma = sum over rows of dout * norm
      dbeta_j += dout_j[i];                                // dbeta = sum over rows of dout
      dnorm_mean[i] += dnorm;                              // sum of dnorm (the mean's path)
      dnorm_norm_mean[i] += dnorm * norm;                  // sum of dnorm * norm (the variance's path)
    }
    g.dgamma(j) += dgamma_j;
    g.dbeta(j) += dbeta_j;
  }
  if (g.dx.is_empty()) return;
  dnorm_mean /= double(D);       // the sums become means
  dnorm_norm_mean /= double(D);
  for (arma::uword j = 0; j < D; ++j) {
    const double* x_j = x.colptr(j);
    const double* dout_j = dout.colptr(j);
    double* dx_j = g.dx.colptr(j);
    const double gamma_j = gamma(j);
    for (arma::uword i = 0; i < N; ++i) {
      const double norm = (x_j[i] - mean[i]) * rstd[i];
      double dval = dout_j[i] * gamma_j;   // term 1: dnorm, straight through norm = (x - mean) * rstd
      dval -= dnorm_mean[i];               // term 2: through the mean
      dval -= norm * dnorm_norm_mean[i];   // term 3: through the variance (rstd)
      dx_j[i] = dval * rstd[i];            // final scale by rstd
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
  s.norm = x / rms;
  s.y = s.norm * gamma;
  s.steps = {{"x^2", squares},
             {"mean(x^2)", mean_square},
             {"mean(x^2) + eps", mean_square_eps},
             {"rms = sqrt(mean(x^2) + eps)", rms},
             {"normalised = x / rms", s.norm},
             {"y = gamma * normalised", s.y}};
  return s;
}

Var rmsnorm_composed(Var x, Var gamma, double eps) { return rmsnorm_composed_steps(x, gamma, eps).y; }

// ---- RMSNorm, fused ---------------------------------------------------------

namespace {

// y = norm * gamma, norm = x * rstd, rstd = 1 / sqrt(mean(x^2) + eps); fills rstd.
arma::mat rmsnorm_forward(const arma::mat& x, const arma::mat& gamma, double eps, arma::vec& rstd) {
  const arma::uword N = x.n_rows, D = x.n_cols;
  rstd.zeros(N);
  arma::mat y(N, D, arma::fill::none);
  if (N == 0) return y;  // no rows: nothing to sweep (and colptr of an empty matrix is a null reference)
  for (arma::uword j = 0; j < D; ++j) {
    const double* x_j = x.colptr(j);
    for (arma::uword i = 0; i < N; ++i) rstd[i] += x_j[i] * x_j[i];  // the sum of squares, for now
  }
  for (arma::uword i = 0; i < N; ++i) rstd[i] = 1.0 / std::sqrt(rstd[i] / double(D) + eps);
  for (arma::uword j = 0; j < D; ++j) {
    const double* x_j = x.colptr(j);
    double* y_j = y.colptr(j);
    const double gamma_j = gamma(j);
    for (arma::uword i = 0; i < N; ++i) {
      const double norm = x_j[i] * rstd[i];  // normalise
      y_j[i] = norm * gamma_j;               // scale
    }
  }
  return y;
}

// As layernorm_backward, without the mean's path and without beta:
//   dx = rstd * (dnorm - norm * dnorm_norm_mean),  dnorm = dout * gamma.
void rmsnorm_backward(const arma::mat& x, const arma::mat& gamma, const arma::mat& dout,
                      const arma::vec& rstd, NormGrads& g) {
  const arma::uword N = x.n_rows, D = x.n_cols;
  if (N == 0) return;  // no rows: dgamma stays 0, dx is empty
  arma::vec dnorm_norm_mean(N, arma::fill::zeros);  // per row
  for (arma::uword j = 0; j < D; ++j) {
    const double* x_j = x.colptr(j);
    const double* dout_j = dout.colptr(j);
    const double gamma_j = gamma(j);
    double dgamma_j = 0;
    for (arma::uword i = 0; i < N; ++i) {
      const double norm = x_j[i] * rstd[i];     // recomputed, not saved
      const double dnorm = dout_j[i] * gamma_j;  // through y = gamma * norm
      dgamma_j += dout_j[i] * norm;              // dgamma = sum over rows of dout * norm
      dnorm_norm_mean[i] += dnorm * norm;        // sum of dnorm * norm (the rms's path)
    }
    g.dgamma(j) += dgamma_j;
  }
  if (g.dx.is_empty()) return;
  dnorm_norm_mean /= double(D);  // the sum becomes a mean
  for (arma::uword j = 0; j < D; ++j) {
    const double* x_j = x.colptr(j);
    const double* dout_j = dout.colptr(j);
    double* dx_j = g.dx.colptr(j);
    const double gamma_j = gamma(j);
    for (arma::uword i = 0; i < N; ++i) {
      const double norm = x_j[i] * rstd[i];
      double dval = dout_j[i] * gamma_j;   // term 1: dnorm, straight through norm = x * rstd
      dval -= norm * dnorm_norm_mean[i];   // term 2: through the rms (rstd)
      dx_j[i] = dval * rstd[i];            // final scale by rstd
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
Var batchnorm_composed(Var x, Var gamma, Var beta, double eps, Centring centring) {
  check_norm_args("batchnorm_composed", x, gamma, &beta, eps, 0, 2);
  return normalise_composed(x, gamma, beta, eps, 0, centring).y;
}

}  // namespace ag
