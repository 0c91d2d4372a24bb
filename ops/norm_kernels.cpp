#include "ops/norm_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <type_traits>

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

// The sweeps take the columns a few at a time: a per-row value (a sum, mean,
// rstd) is loaded and stored once for the group instead of once a column,
// and those loads, not memory, were a tenth to a fifth of the time. A row's
// sums still add column after column, in the order one column at a time
// would, so y, dx, mean and rstd are the same to the bit; only the vector
// lanes of dgamma's and dbeta's column sums are laid out differently (about
// 1e-15 relative).
//
// Four columns at a time, but two where the columns start a multiple of
// 128 KB apart (16384 rows): a 2 MB, 16-way L2 picks a line's set from
// address bits 6-16, so such columns fall into the same sets, and four of
// them from x and four from dy, with what the prefetcher fetches ahead of
// each, evict each other. Measured cold, forward + backward
// (docs/performance.md): 4000x768 13.9 -> 10.8 ms with four, 16384x1024
// 70 -> 61-64 ms with two.
constexpr std::size_t kL2Way = std::size_t{128} << 10;

template <arma::uword Width, class Step>
void in_groups_of(arma::uword first, arma::uword D, Step step) {
  arma::uword j = first;
  for (; j + Width <= D; j += Width) step(j, std::integral_constant<arma::uword, Width>{});
  for (; j < D; ++j) step(j, std::integral_constant<arma::uword, 1>{});
}

// step(j, group) for the columns first .. D-1 of a matrix of N rows: j a
// group's first column and decltype(group)::value its width, four or two
// while that many columns are left, then 1 for the last few.
template <class Step>
void in_groups(arma::uword N, arma::uword first, arma::uword D, Step step) {
  if (N * sizeof(double) % kL2Way == 0) {
    in_groups_of<2>(first, D, step);
  } else {
    in_groups_of<4>(first, D, step);
  }
}

// Two per-row sums in one buffer, the second 40 doubles (5 cache lines)
// further than N: two separate vectors of 16384 rows landed 128 KB apart, in
// the same L2 sets as each other and as the columns.
struct RowSums {
  static constexpr arma::uword kSkew = 40;
  arma::vec buffer;
  double* first;
  double* second;
  explicit RowSums(arma::uword N)
      : buffer(2 * N + kSkew, arma::fill::zeros), first(buffer.memptr()), second(buffer.memptr() + N + kSkew) {}
};

// Per-row mean and rstd = 1 / sqrt(var + eps) in one sweep over x, never
// E[x^2] - E[x]^2: the sums are of d = x - shift, with shift = the row's first
// value. Then var = mean(d^2) - mean(d)^2 loses at most a factor
// (mean - shift)^2 / var <= D of precision (~1e-13 relative for D = 768),
// however large the offset: a row at 1e8 + noise is as accurate as the noise
// alone, and a constant row gives d = 0, so mean = shift exactly and y = beta.
// One sweep instead of two: the forward reads x twice (stats, output), not three times.
void layernorm_stats(const arma::mat& x, double eps, arma::vec& mean, arma::vec& rstd) {
  const arma::uword N = x.n_rows, D = x.n_cols;
  RowSums sums(N);  // per row: sum d, sum d^2
  double* sum_d = sums.first;
  double* sum_d2 = sums.second;
  mean.set_size(N);
  rstd.set_size(N);
  if (N == 0) return;  // no rows: nothing to sweep (and colptr of an empty matrix is a null reference)
  const double* shift = x.colptr(0);
  in_groups(N, 1, D, [&](arma::uword j, auto group) {  // column 0 is the shift: its d is 0
    constexpr arma::uword K = decltype(group)::value;
    const double* x_j = x.colptr(j);  // columns j .. j + K - 1, N apart
    for (arma::uword i = 0; i < N; ++i) {
      double s = sum_d[i], s2 = sum_d2[i];
      for (arma::uword k = 0; k < K; ++k) {
        const double d = x_j[k * N + i] - shift[i];
        s += d;
        s2 += d * d;
      }
      sum_d[i] = s;
      sum_d2[i] = s2;
    }
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
  in_groups(N, 0, D, [&](arma::uword j, auto group) {
    constexpr arma::uword K = decltype(group)::value;
    const double* x_j = x.colptr(j);
    const double* gamma_j = gamma.memptr() + j;
    const double* beta_j = beta.memptr() + j;
    write_columns<K>(y.colptr(j), N, N, stream, [&](arma::uword i, arma::uword k) {
      const double norm = (x_j[k * N + i] - mean[i]) * rstd[i];  // normalise
      return norm * gamma_j[k] + beta_j[k];                       // scale and shift
    });
  });
  stream_fence();
}

// llm.c's layernorm_backward, one column group at a time: the first sweep gathers
// dgamma, dbeta and the two per-row means of dnorm; the second writes
//   dx = rstd * (dnorm - dnorm_mean - norm * dnorm_norm_mean),  dnorm = dout * gamma.
void layernorm_backward(const arma::mat& x, const arma::mat& gamma, const arma::mat& dout,
                        const arma::vec& mean, const arma::vec& rstd, NormGrads& g) {
  const arma::uword N = x.n_rows, D = x.n_cols;
  if (N == 0) return;  // no rows: dgamma and dbeta stay 0, dx is empty
  RowSums sums(N);  // per row: sum of dnorm, sum of dnorm * norm; then their means
  double* dnorm_mean = sums.first;
  double* dnorm_norm_mean = sums.second;
  in_groups(N, 0, D, [&](arma::uword j, auto group) {
    constexpr arma::uword K = decltype(group)::value;
    const double* x_j = x.colptr(j);
    const double* dout_j = dout.colptr(j);
    const double* gamma_j = gamma.memptr() + j;
    double dgamma_j[K] = {}, dbeta_j[K] = {};
#pragma omp simd reduction(+ : dgamma_j[:K], dbeta_j[:K])
    for (arma::uword i = 0; i < N; ++i) {
      double dnorm_sum = dnorm_mean[i], dnorm_norm_sum = dnorm_norm_mean[i];
      for (arma::uword k = 0; k < K; ++k) {
        const double dout_ik = dout_j[k * N + i];
        const double norm = (x_j[k * N + i] - mean[i]) * rstd[i];  // recomputed, not saved
        const double dnorm = dout_ik * gamma_j[k];                   // through y = gamma * norm + beta
        dgamma_j[k] += dout_ik * norm;                               // dgamma = sum over rows of dout * norm
        dbeta_j[k] += dout_ik;                                       // dbeta = sum over rows of dout
        dnorm_sum += dnorm;                                          // sum of dnorm (the mean's path)
        dnorm_norm_sum += dnorm * norm;                              // sum of dnorm * norm (the variance's path)
      }
      dnorm_mean[i] = dnorm_sum;
      dnorm_norm_mean[i] = dnorm_norm_sum;
    }
    for (arma::uword k = 0; k < K; ++k) {
      g.dgamma(j + k) += dgamma_j[k];
      g.dbeta(j + k) += dbeta_j[k];
    }
  });
  if (g.dx.is_empty()) return;
  for (arma::uword i = 0; i < N; ++i) {  // the sums become means
    dnorm_mean[i] /= double(D);
    dnorm_norm_mean[i] /= double(D);
  }
  const bool stream = streamed(g.dx);
  in_groups(N, 0, D, [&](arma::uword j, auto group) {
    constexpr arma::uword K = decltype(group)::value;
    const double* x_j = x.colptr(j);
    const double* dout_j = dout.colptr(j);
    const double* gamma_j = gamma.memptr() + j;
    write_columns<K>(g.dx.colptr(j), N, N, stream, [&](arma::uword i, arma::uword k) {
      const double norm = (x_j[k * N + i] - mean[i]) * rstd[i];
      double dval = dout_j[k * N + i] * gamma_j[k];  // term 1: dnorm, straight through norm = (x - mean) * rstd
      dval -= dnorm_mean[i];                         // term 2: through the mean
      dval -= norm * dnorm_norm_mean[i];             // term 3: through the variance (rstd)
      return dval * rstd[i];                         // final scale by rstd
    });
  });
  stream_fence();
}

void rmsnorm_forward(const arma::mat& x, const arma::mat& gamma, double eps, arma::vec& rstd, arma::mat& y) {
  const arma::uword N = x.n_rows, D = x.n_cols;
  rstd.zeros(N);
  y.set_size(N, D);
  if (N == 0) return;  // no rows: nothing to sweep (and colptr of an empty matrix is a null reference)
  in_groups(N, 0, D, [&](arma::uword j, auto group) {
    constexpr arma::uword K = decltype(group)::value;
    const double* x_j = x.colptr(j);
    for (arma::uword i = 0; i < N; ++i) {
      double sum_sq = rstd[i];  // the sum of squares, for now
      for (arma::uword k = 0; k < K; ++k) sum_sq += x_j[k * N + i] * x_j[k * N + i];
      rstd[i] = sum_sq;
    }
  });
  for (arma::uword i = 0; i < N; ++i) rstd[i] = 1.0 / std::sqrt(rstd[i] / double(D) + eps);
  const bool stream = streamed(y);
  in_groups(N, 0, D, [&](arma::uword j, auto group) {
    constexpr arma::uword K = decltype(group)::value;
    const double* x_j = x.colptr(j);
    const double* gamma_j = gamma.memptr() + j;
    write_columns<K>(y.colptr(j), N, N, stream, [&](arma::uword i, arma::uword k) {
      const double norm = x_j[k * N + i] * rstd[i];  // normalise
      return norm * gamma_j[k];                      // scale
    });
  });
  stream_fence();
}

// As layernorm_backward, without the mean's path and without beta:
//   dx = rstd * (dnorm - norm * dnorm_norm_mean),  dnorm = dout * gamma.
void rmsnorm_backward(const arma::mat& x, const arma::mat& gamma, const arma::mat& dout,
                      const arma::vec& rstd, NormGrads& g) {
  const arma::uword N = x.n_rows, D = x.n_cols;
  if (N == 0) return;  // no rows: dgamma stays 0, dx is empty
  arma::vec dnorm_norm_mean(N, arma::fill::zeros);  // per row
  in_groups(N, 0, D, [&](arma::uword j, auto group) {
    constexpr arma::uword K = decltype(group)::value;
    const double* x_j = x.colptr(j);
    const double* dout_j = dout.colptr(j);
    const double* gamma_j = gamma.memptr() + j;
    double dgamma_j[K] = {};
#pragma omp simd reduction(+ : dgamma_j[:K])
    for (arma::uword i = 0; i < N; ++i) {
      double dnorm_norm_sum = dnorm_norm_mean[i];
      for (arma::uword k = 0; k < K; ++k) {
        const double dout_ik = dout_j[k * N + i];
        const double norm = x_j[k * N + i] * rstd[i];  // recomputed, not saved
        const double dnorm = dout_ik * gamma_j[k];     // through y = gamma * norm
        dgamma_j[k] += dout_ik * norm;                 // dgamma = sum over rows of dout * norm
        dnorm_norm_sum += dnorm * norm;                // sum of dnorm * norm (the rms's path)
      }
      dnorm_norm_mean[i] = dnorm_norm_sum;
    }
    for (arma::uword k = 0; k < K; ++k) g.dgamma(j + k) += dgamma_j[k];
  });
  if (g.dx.is_empty()) return;
  dnorm_norm_mean /= double(D);  // the sum becomes a mean
  const bool stream = streamed(g.dx);
  in_groups(N, 0, D, [&](arma::uword j, auto group) {
    constexpr arma::uword K = decltype(group)::value;
    const double* x_j = x.colptr(j);
    const double* dout_j = dout.colptr(j);
    const double* gamma_j = gamma.memptr() + j;
    write_columns<K>(g.dx.colptr(j), N, N, stream, [&](arma::uword i, arma::uword k) {
      const double norm = x_j[k * N + i] * rstd[i];
      double dval = dout_j[k * N + i] * gamma_j[k];  // term 1: dnorm, straight through norm = x * rstd
      dval -= norm * dnorm_norm_mean[i];             // term 2: through the rms (rstd)
      return dval * rstd[i];                         // final scale by rstd
    });
  });
  stream_fence();
}

}  // namespace ag::kernels
