#include "ops/norm_kernels.h"

#include <algorithm>
#include <cmath>

#include "ops/stream.h"

namespace ag::kernels {

// The kernels walk memory in storage order. Armadillo is column-major, so each
// inner loop runs down one column (contiguous, vectorised) while per-row
// accumulators (N doubles: sums, mean, rstd) stay in cache. Every pass is a
// straight sweep the hardware prefetcher can follow. Packing strips of 32-64
// rows into a buffer (one read of x instead of two) measured slower here than
// these sweeps with streamed outputs; see docs/performance.md.
//
// Sums down a column (dgamma, dbeta) are vectorised with `omp simd
// reduction` (-fopenmp-simd: the pragma only, no OpenMP runtime): without it
// the compiler must add in row order, one add at a time. The lanes change the
// order of those additions, not what is added (about 1e-15 relative).

namespace {

// Outputs larger than the caches go straight to memory (ops/stream.h).
bool streamed(const arma::mat& out) { return out.n_elem * sizeof(double) >= kStreamBytes; }

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

}  // namespace

void layernorm_forward(const arma::mat& x, const arma::mat& gamma, const arma::mat& beta, double eps,
                       arma::vec& mean, arma::vec& rstd, arma::mat& y) {
  layernorm_stats(x, eps, mean, rstd);
  y.set_size(x.n_rows, x.n_cols);
  if (x.n_rows == 0) return;
  const bool stream = streamed(y);
  for (arma::uword j = 0; j < x.n_cols; ++j) {
    const double* x_j = x.colptr(j);
    const double gamma_j = gamma(j), beta_j = beta(j);
    write_column(y.colptr(j), x.n_rows, stream, [&](arma::uword i) {
      const double norm = (x_j[i] - mean[i]) * rstd[i];  // normalise
      return norm * gamma_j + beta_j;                     // scale and shift
    });
  }
  stream_fence();
}

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
#pragma omp simd reduction(+ : dgamma_j, dbeta_j)
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
  const bool stream = streamed(g.dx);
  for (arma::uword j = 0; j < D; ++j) {
    const double* x_j = x.colptr(j);
    const double* dout_j = dout.colptr(j);
    const double gamma_j = gamma(j);
    write_column(g.dx.colptr(j), N, stream, [&](arma::uword i) {
      const double norm = (x_j[i] - mean[i]) * rstd[i];
      double dval = dout_j[i] * gamma_j;   // term 1: dnorm, straight through norm = (x - mean) * rstd
      dval -= dnorm_mean[i];               // term 2: through the mean
      dval -= norm * dnorm_norm_mean[i];   // term 3: through the variance (rstd)
      return dval * rstd[i];               // final scale by rstd
    });
  }
  stream_fence();
}

void rmsnorm_forward(const arma::mat& x, const arma::mat& gamma, double eps, arma::vec& rstd, arma::mat& y) {
  const arma::uword N = x.n_rows, D = x.n_cols;
  rstd.zeros(N);
  y.set_size(N, D);
  if (N == 0) return;  // no rows: nothing to sweep (and colptr of an empty matrix is a null reference)
  for (arma::uword j = 0; j < D; ++j) {
    const double* x_j = x.colptr(j);
    for (arma::uword i = 0; i < N; ++i) rstd[i] += x_j[i] * x_j[i];  // the sum of squares, for now
  }
  for (arma::uword i = 0; i < N; ++i) rstd[i] = 1.0 / std::sqrt(rstd[i] / double(D) + eps);
  const bool stream = streamed(y);
  for (arma::uword j = 0; j < D; ++j) {
    const double* x_j = x.colptr(j);
    const double gamma_j = gamma(j);
    write_column(y.colptr(j), N, stream, [&](arma::uword i) {
      const double norm = x_j[i] * rstd[i];  // normalise
      return norm * gamma_j;                 // scale
    });
  }
  stream_fence();
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
#pragma omp simd reduction(+ : dgamma_j)
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
  const bool stream = streamed(g.dx);
  for (arma::uword j = 0; j < D; ++j) {
    const double* x_j = x.colptr(j);
    const double* dout_j = dout.colptr(j);
    const double gamma_j = gamma(j);
    write_column(g.dx.colptr(j), N, stream, [&](arma::uword i) {
      const double norm = x_j[i] * rstd[i];
      double dval = dout_j[i] * gamma_j;   // term 1: dnorm, straight through norm = x * rstd
      dval -= norm * dnorm_norm_mean[i];   // term 2: through the rms (rstd)
      return dval * rstd[i];               // final scale by rstd
    });
  }
  stream_fence();
}

}  // namespace ag::kernels
