#include "ops/norm_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "ops/sweeps.h"

namespace ag::kernels {

// One vocabulary, as in lesson 04, the exercise and the page: xhat is the
// normalised value (x - mean) * rstd, dxhat = dout * gamma its gradient, and
// dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)): term 1
// straight through xhat, term 2 through the mean, term 3 through the variance.

// ---------------------------------------------------------------------------
// The specification: llm.c's layernorm_forward and layernorm_backward, row by
// row. The kernels below compute the same numbers in column sweeps (Armadillo
// is column-major), and tests/test_norm_kernels.cpp holds them to these loops
// bit for bit: y, mean, rstd and dx. Only dgamma and dbeta, sums down the
// rows, are added in another order (in the vector's lanes).
// ---------------------------------------------------------------------------
namespace spec {

// Statistics shifted by the row's first value (d = x - x[0]), never
// E[x^2] - E[x]^2: var = mean(d^2) - mean(d)^2 loses at most a factor
// (mean - shift)^2 / var <= D of precision however large the offset, and a
// constant row gives d = 0, so mean = shift exactly and y = beta.
void layernorm_forward(const arma::mat& x, const arma::mat& gamma, const arma::mat& beta, double eps,
                       arma::vec& mean, arma::vec& rstd, arma::mat& y) {
  const arma::uword N = x.n_rows, D = x.n_cols;
  mean.set_size(N);
  rstd.set_size(N);
  y.set_size(N, D);
  for (arma::uword i = 0; i < N; ++i) {
    const double shift = x(i, 0);
    double sum_d = 0, sum_d2 = 0;
    for (arma::uword j = 1; j < D; ++j) {  // column 0 is the shift: its d is 0
      const double d = x(i, j) - shift;
      sum_d += d;
      sum_d2 += d * d;
    }
    const double mean_d = sum_d / double(D);
    mean[i] = shift + mean_d;
    const double var = std::max(0.0, sum_d2 / double(D) - mean_d * mean_d);  // biased
    rstd[i] = 1.0 / std::sqrt(var + eps);
    for (arma::uword j = 0; j < D; ++j) {
      const double xhat = (x(i, j) - mean[i]) * rstd[i];  // normalise
      y(i, j) = xhat * gamma[j] + beta[j];                // scale and shift
    }
  }
}

void layernorm_backward(const arma::mat& x, const arma::mat& gamma, const arma::mat& dout, const arma::vec& mean,
                        const arma::vec& rstd, NormGrads& g) {
  const arma::uword N = x.n_rows, D = x.n_cols;
  for (arma::uword i = 0; i < N; ++i) {
    // Two reductions: the means of dxhat and of dxhat * xhat.
    double dxhat_mean = 0, dxhat_xhat_mean = 0;
    for (arma::uword j = 0; j < D; ++j) {
      const double xhat = (x(i, j) - mean[i]) * rstd[i];
      const double dxhat = dout(i, j) * gamma[j];
      dxhat_mean += dxhat;
      dxhat_xhat_mean += dxhat * xhat;
    }
    dxhat_mean /= double(D);
    dxhat_xhat_mean /= double(D);
    // Then accumulate the gradients.
    for (arma::uword j = 0; j < D; ++j) {
      const double xhat = (x(i, j) - mean[i]) * rstd[i];
      g.dbeta[j] += dout(i, j);
      g.dgamma[j] += dout(i, j) * xhat;
      if (g.dx.is_empty()) continue;
      double dval = dout(i, j) * gamma[j];  // term 1: dxhat
      dval -= dxhat_mean;                   // term 2: through the mean
      dval -= xhat * dxhat_xhat_mean;       // term 3: through the variance
      g.dx(i, j) = dval * rstd[i];          // final scale by rstd
    }
  }
}

// RMSNorm: LayerNorm without the mean (and without beta).
void rmsnorm_forward(const arma::mat& x, const arma::mat& gamma, double eps, arma::vec& rstd, arma::mat& y) {
  const arma::uword N = x.n_rows, D = x.n_cols;
  rstd.set_size(N);
  y.set_size(N, D);
  for (arma::uword i = 0; i < N; ++i) {
    double sum_sq = 0;
    for (arma::uword j = 0; j < D; ++j) sum_sq += x(i, j) * x(i, j);
    rstd[i] = 1.0 / std::sqrt(sum_sq / double(D) + eps);
    for (arma::uword j = 0; j < D; ++j) {
      const double xhat = x(i, j) * rstd[i];  // normalise
      y(i, j) = xhat * gamma[j];              // scale
    }
  }
}

void rmsnorm_backward(const arma::mat& x, const arma::mat& gamma, const arma::mat& dout, const arma::vec& rstd,
                      NormGrads& g) {
  const arma::uword N = x.n_rows, D = x.n_cols;
  for (arma::uword i = 0; i < N; ++i) {
    double dxhat_xhat_mean = 0;
    for (arma::uword j = 0; j < D; ++j) dxhat_xhat_mean += dout(i, j) * gamma[j] * (x(i, j) * rstd[i]);
    dxhat_xhat_mean /= double(D);
    for (arma::uword j = 0; j < D; ++j) {
      const double xhat = x(i, j) * rstd[i];
      g.dgamma[j] += dout(i, j) * xhat;
      if (g.dx.is_empty()) continue;
      double dval = dout(i, j) * gamma[j];  // term 1: dxhat
      dval -= xhat * dxhat_xhat_mean;       // term 2: through the rms
      g.dx(i, j) = dval * rstd[i];          // final scale by rstd
    }
  }
}

}  // namespace spec

// ---------------------------------------------------------------------------
// The kernels: the same arithmetic, each pass one straight sweep down the
// columns (contiguous) while the per-row values (N doubles: sums, mean, rstd)
// stay in cache. ops/sweeps.h holds how they walk: columns in groups, rows in
// vectors (Lanes: a body written for T = Lanes runs kLanes rows at once and,
// as T = double, the rows left over), outputs streamed past the caches when
// large.
//
// dgamma and dbeta are sums down a column: they add in the vector's lanes
// (row i into lane i % kLanes, the rows left over into lane 0, in row order
// within a lane) and then the lanes. That changes the order of those
// additions, not what is added.
// ---------------------------------------------------------------------------

namespace {

// Adds the lanes of acc[k] into out[k], k < K.
template <arma::uword K>
void add_lanes(const Lanes (&acc)[K], double* out) {
  for (arma::uword k = 0; k < K; ++k) out[k] += lane_sum(acc[k]);
}

// The forward's statistics (spec::layernorm_forward's first loop), one sweep over x.
void layernorm_stats(const arma::mat& x, double eps, arma::vec& mean, arma::vec& rstd) {
  const arma::uword N = x.n_rows, D = x.n_cols;
  RowSums sums(N);
  double* sum_d = sums.first;
  double* sum_d2 = sums.second;
  mean.set_size(N);
  rstd.set_size(N);
  if (N == 0) return;  // no rows: nothing to sweep (and colptr of an empty matrix is a null reference)
  const double* shift = x.colptr(0);
  in_groups(Reads::X, N, 1, D, [&](arma::uword j, auto group) {  // column 0 is the shift: its d is 0
    constexpr arma::uword K = decltype(group)::value;
    const double* x_j = x.colptr(j);  // columns j .. j + K - 1, N apart
    rows_of(N, [&](arma::uword i, auto row) {
      using T = decltype(row);
      T s = load<T>(sum_d + i), s2 = load<T>(sum_d2 + i);
      const T shift_i = load<T>(shift + i);
      for (arma::uword k = 0; k < K; ++k) {
        const T d = load<T>(x_j + k * N + i) - shift_i;
        s += d;
        s2 += d * d;
      }
      put(sum_d + i, s, false);
      put(sum_d2 + i, s2, false);
    });
  });
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
  const arma::uword N = x.n_rows, D = x.n_cols;
  layernorm_stats(x, eps, mean, rstd);
  y.set_size(N, D);
  if (N == 0) return;
  const bool stream = streamed(y);
  in_groups(Reads::X, N, 0, D, [&](arma::uword j, auto group) {
    constexpr arma::uword K = decltype(group)::value;
    const double* x_j = x.colptr(j);
    double* y_j = y.colptr(j);
    rows_of(N, [&](arma::uword i, auto row) {
      using T = decltype(row);
      const T mean_i = load<T>(mean.memptr() + i), rstd_i = load<T>(rstd.memptr() + i);
      for (arma::uword k = 0; k < K; ++k) {
        const T xhat = (load<T>(x_j + k * N + i) - mean_i) * rstd_i;  // normalise
        put(y_j + k * N + i, xhat * broadcast<T>(gamma[j + k]) + broadcast<T>(beta[j + k]), stream);  // scale and shift
      }
    }, stream ? y_j : nullptr);
  }, columns_aligned_alike(y, stream));
  stream_fence();
}

// Two sweeps: the first gathers dgamma, dbeta and the two per-row means, the
// second writes dx.
void layernorm_backward(const arma::mat& x, const arma::mat& gamma, const arma::mat& dout,
                        const arma::vec& mean, const arma::vec& rstd, NormGrads& g) {
  const arma::uword N = x.n_rows, D = x.n_cols;
  if (N == 0) return;  // no rows: dgamma and dbeta stay 0, dx is empty
  RowSums sums(N);     // per row: the sums of dxhat and of dxhat * xhat; then their means
  double* dxhat_mean = sums.first;
  double* dxhat_xhat_mean = sums.second;
  in_groups(Reads::XAndDy, N, 0, D, [&](arma::uword j, auto group) {
    constexpr arma::uword K = decltype(group)::value;
    const double* x_j = x.colptr(j);
    const double* dout_j = dout.colptr(j);
    Lanes dgamma_j[K] = {}, dbeta_j[K] = {};
    rows_of(N, [&](arma::uword i, auto row) {
      using T = decltype(row);
      const T mean_i = load<T>(mean.memptr() + i), rstd_i = load<T>(rstd.memptr() + i);
      T dxhat_sum = load<T>(dxhat_mean + i), dxhat_xhat_sum = load<T>(dxhat_xhat_mean + i);
      for (arma::uword k = 0; k < K; ++k) {
        const T dout_ik = load<T>(dout_j + k * N + i);
        const T xhat = (load<T>(x_j + k * N + i) - mean_i) * rstd_i;  // recomputed, not saved
        const T dxhat = dout_ik * broadcast<T>(gamma[j + k]);
        add_into(dgamma_j[k], dout_ik * xhat);
        add_into(dbeta_j[k], dout_ik);
        dxhat_sum += dxhat;
        dxhat_xhat_sum += dxhat * xhat;
      }
      put(dxhat_mean + i, dxhat_sum, false);
      put(dxhat_xhat_mean + i, dxhat_xhat_sum, false);
    });
    add_lanes(dgamma_j, g.dgamma.memptr() + j);
    add_lanes(dbeta_j, g.dbeta.memptr() + j);
  });
  if (g.dx.is_empty()) return;
  for (arma::uword i = 0; i < N; ++i) {  // the sums become means
    dxhat_mean[i] /= double(D);
    dxhat_xhat_mean[i] /= double(D);
  }
  const bool stream = streamed(g.dx);
  in_groups(Reads::XAndDy, N, 0, D, [&](arma::uword j, auto group) {
    constexpr arma::uword K = decltype(group)::value;
    const double* x_j = x.colptr(j);
    const double* dout_j = dout.colptr(j);
    double* dx_j = g.dx.colptr(j);
    rows_of(N, [&](arma::uword i, auto row) {
      using T = decltype(row);
      const T mean_i = load<T>(mean.memptr() + i), rstd_i = load<T>(rstd.memptr() + i);
      const T dxhat_mean_i = load<T>(dxhat_mean + i), dxhat_xhat_mean_i = load<T>(dxhat_xhat_mean + i);
      for (arma::uword k = 0; k < K; ++k) {
        const T xhat = (load<T>(x_j + k * N + i) - mean_i) * rstd_i;
        T dval = load<T>(dout_j + k * N + i) * broadcast<T>(gamma[j + k]);  // term 1: dxhat
        dval -= dxhat_mean_i;                                               // term 2: through the mean
        dval -= xhat * dxhat_xhat_mean_i;                                   // term 3: through the variance
        put(dx_j + k * N + i, dval * rstd_i, stream);                       // final scale by rstd
      }
    }, stream ? dx_j : nullptr);
  }, columns_aligned_alike(g.dx, stream));
  stream_fence();
}

void rmsnorm_forward(const arma::mat& x, const arma::mat& gamma, double eps, arma::vec& rstd, arma::mat& y) {
  const arma::uword N = x.n_rows, D = x.n_cols;
  rstd.zeros(N);
  y.set_size(N, D);
  if (N == 0) return;  // no rows: nothing to sweep (and colptr of an empty matrix is a null reference)
  double* sum_sq = rstd.memptr();  // the sums of squares, for now
  in_groups(Reads::X, N, 0, D, [&](arma::uword j, auto group) {
    constexpr arma::uword K = decltype(group)::value;
    const double* x_j = x.colptr(j);
    rows_of(N, [&](arma::uword i, auto row) {
      using T = decltype(row);
      T s = load<T>(sum_sq + i);
      for (arma::uword k = 0; k < K; ++k) {
        const T x_ik = load<T>(x_j + k * N + i);
        s += x_ik * x_ik;
      }
      put(sum_sq + i, s, false);
    });
  });
  for (arma::uword i = 0; i < N; ++i) rstd[i] = 1.0 / std::sqrt(sum_sq[i] / double(D) + eps);
  const bool stream = streamed(y);
  in_groups(Reads::X, N, 0, D, [&](arma::uword j, auto group) {
    constexpr arma::uword K = decltype(group)::value;
    const double* x_j = x.colptr(j);
    double* y_j = y.colptr(j);
    rows_of(N, [&](arma::uword i, auto row) {
      using T = decltype(row);
      const T rstd_i = load<T>(rstd.memptr() + i);
      for (arma::uword k = 0; k < K; ++k) {
        const T xhat = load<T>(x_j + k * N + i) * rstd_i;         // normalise
        put(y_j + k * N + i, xhat * broadcast<T>(gamma[j + k]), stream);  // scale
      }
    }, stream ? y_j : nullptr);
  }, columns_aligned_alike(y, stream));
  stream_fence();
}

void rmsnorm_backward(const arma::mat& x, const arma::mat& gamma, const arma::mat& dout,
                      const arma::vec& rstd, NormGrads& g) {
  const arma::uword N = x.n_rows, D = x.n_cols;
  if (N == 0) return;  // no rows: dgamma stays 0, dx is empty
  arma::vec dxhat_xhat_mean(N, arma::fill::zeros);  // per row: the sum, then the mean
  double* dxhat_xhat = dxhat_xhat_mean.memptr();
  in_groups(Reads::XAndDy, N, 0, D, [&](arma::uword j, auto group) {
    constexpr arma::uword K = decltype(group)::value;
    const double* x_j = x.colptr(j);
    const double* dout_j = dout.colptr(j);
    Lanes dgamma_j[K] = {};
    rows_of(N, [&](arma::uword i, auto row) {
      using T = decltype(row);
      const T rstd_i = load<T>(rstd.memptr() + i);
      T dxhat_xhat_sum = load<T>(dxhat_xhat + i);
      for (arma::uword k = 0; k < K; ++k) {
        const T dout_ik = load<T>(dout_j + k * N + i);
        const T xhat = load<T>(x_j + k * N + i) * rstd_i;  // recomputed, not saved
        add_into(dgamma_j[k], dout_ik * xhat);
        dxhat_xhat_sum += dout_ik * broadcast<T>(gamma[j + k]) * xhat;
      }
      put(dxhat_xhat + i, dxhat_xhat_sum, false);
    });
    add_lanes(dgamma_j, g.dgamma.memptr() + j);
  });
  if (g.dx.is_empty()) return;
  for (arma::uword i = 0; i < N; ++i) dxhat_xhat[i] /= double(D);
  const bool stream = streamed(g.dx);
  in_groups(Reads::XAndDy, N, 0, D, [&](arma::uword j, auto group) {
    constexpr arma::uword K = decltype(group)::value;
    const double* x_j = x.colptr(j);
    const double* dout_j = dout.colptr(j);
    double* dx_j = g.dx.colptr(j);
    rows_of(N, [&](arma::uword i, auto row) {
      using T = decltype(row);
      const T rstd_i = load<T>(rstd.memptr() + i), dxhat_xhat_mean_i = load<T>(dxhat_xhat + i);
      for (arma::uword k = 0; k < K; ++k) {
        const T xhat = load<T>(x_j + k * N + i) * rstd_i;
        T dval = load<T>(dout_j + k * N + i) * broadcast<T>(gamma[j + k]);  // term 1: dxhat
        dval -= xhat * dxhat_xhat_mean_i;                                   // term 2: through the rms
        put(dx_j + k * N + i, dval * rstd_i, stream);                       // final scale by rstd
      }
    }, stream ? dx_j : nullptr);
  }, columns_aligned_alike(g.dx, stream));
  stream_fence();
}

}  // namespace ag::kernels
