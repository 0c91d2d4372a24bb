// How the fused norm kernels (ops/norm_kernels.cpp) walk a column-major
// matrix: the machinery, kept out of the kernels so that they show the math.
//
// - in_groups: the columns a few at a time, so a per-row value (a sum, mean,
//   rstd) is loaded and stored once for the group instead of once a column.
// - RowSums: two per-row sums in one buffer, skewed so they do not share cache sets.
// - write_columns: the output, streamed past the caches when it is too large
//   to stay there (non-temporal stores), else plain vectorised stores.
// - sweep_plan: the two numbers these choices need.
//
// Why stream: an ordinary store first reads the destination line into the
// cache (a read-for-ownership), so writing an output no cache can hold costs
// a read and a write of it; a streaming store skips the read. An output that
// fits stays in cache for the next op to read, and there an ordinary store is
// faster. Measurements: docs/performance.md and bench/README.md.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <armadillo>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

namespace ag {

// What the sweeps' choices follow, read once from ag::cache_sizes().
struct SweepPlan {
  // Outputs of at least this many bytes are streamed. Fixed, not derived:
  // 4 MiB was twice the Xeon's L2 where it was measured, and twice this AMD
  // EPYC's 1 MiB L2 streamed 2.25 MiB outputs that ran faster through its L3
  // (docs/performance.md); which cache the rule should follow is not measured yet.
  std::size_t stream_bytes;
  // Columns a multiple of this many bytes apart map to the same L2 sets (the
  // L2's size over its ways: a set is picked by the address bits below it).
  // Four such columns from x and four from dy, with what the prefetcher
  // fetches ahead of each, evict each other, so the sweeps take them two at a time.
  std::size_t alias_stride;
};
// alias_stride from this machine's L2 (ops/sweeps.cpp), 128 KiB where it says nothing.
const SweepPlan& sweep_plan();

inline bool streamed(const arma::mat& out) { return out.n_elem * sizeof(double) >= sweep_plan().stream_bytes; }

// Copies n doubles to dst, bypassing the caches where the target can.
inline void stream_store(double* dst, const double* src, std::size_t n) {
#if defined(__AVX__) || defined(__SSE2__)
#if defined(__AVX__)
  constexpr std::size_t kLanes = 4, kAlign = 32;
#else
  constexpr std::size_t kLanes = 2, kAlign = 16;
#endif
  std::size_t i = 0;
  for (; i < n && reinterpret_cast<std::uintptr_t>(dst + i) % kAlign != 0; ++i) dst[i] = src[i];
  for (; i + kLanes <= n; i += kLanes) {
#if defined(__AVX__)
    _mm256_stream_pd(dst + i, _mm256_loadu_pd(src + i));
#else
    _mm_stream_pd(dst + i, _mm_loadu_pd(src + i));
#endif
  }
  for (; i < n; ++i) dst[i] = src[i];
#else
  std::memcpy(dst, src, n * sizeof(double));
#endif
}

// Orders the streaming stores before anything later (they are weakly ordered).
inline void stream_fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

// K output columns at once, a stride apart (column-major: the matrix's row
// count): out[k * stride + i] = value(i, k) for i < n, k < K.
//
// Streamed, through small buffers in L1 that stream_store then writes past
// the caches, filled row by row for the K columns: a kernel's per-row values
// (mean, rstd, ...) are loaded once for the K of them while x streams in.
// Not streamed (the output fits in cache), straight into out, one column
// after another: each loop is then a plain sweep the compiler vectorises
// (filled row by row, GCC 12 vectorises none of the grouped loops: -fopt-info-vec).
template <std::size_t K, class Value>
void write_columns(double* out, std::size_t stride, std::size_t n, bool stream, Value value) {
  if (!stream) {
    for (std::size_t k = 0; k < K; ++k) {
      double* const out_k = out + k * stride;
      for (std::size_t i = 0; i < n; ++i) out_k[i] = value(i, k);
    }
    return;
  }
  constexpr std::size_t kChunk = 256;  // 2 KB a column: K of them stay in L1
  alignas(64) double chunk[K][kChunk];
  for (std::size_t first = 0; first < n; first += kChunk) {
    const std::size_t count = std::min(kChunk, n - first);
    for (std::size_t q = 0; q < count; ++q) {
      for (std::size_t k = 0; k < K; ++k) chunk[k][q] = value(first + q, k);
    }
    for (std::size_t k = 0; k < K; ++k) stream_store(out + k * stride + first, chunk[k], count);
  }
}

// One column: out[i] = value(i) for i < n.
template <class Value>
void write_column(double* out, std::size_t n, bool stream, Value value) {
  write_columns<1>(out, n, n, stream, [&](std::size_t i, std::size_t) { return value(i); });
}

template <arma::uword Width, class Step>
void in_groups_of(arma::uword first, arma::uword D, Step step) {
  arma::uword j = first;
  for (; j + Width <= D; j += Width) step(j, std::integral_constant<arma::uword, Width>{});
  for (; j < D; ++j) step(j, std::integral_constant<arma::uword, 1>{});
}

// step(j, group) for the columns first .. D-1 of a matrix of N rows: j a
// group's first column and decltype(group)::value its width, four (two where
// the columns alias in the L2) while that many are left, then 1 for the last
// few. A row's sums still add column after column, in the order one column at
// a time would, so grouping changes no bit of them.
template <class Step>
void in_groups(arma::uword N, arma::uword first, arma::uword D, Step step) {
  if (N * sizeof(double) % sweep_plan().alias_stride == 0) {
    in_groups_of<2>(first, D, step);
  } else {
    in_groups_of<4>(first, D, step);
  }
}

// Two per-row sums in one buffer, the second 40 doubles (5 cache lines)
// further than N: two separate vectors of a power-of-two length would start
// an alias stride apart, in the same L2 sets as each other and as the columns.
struct RowSums {
  static constexpr arma::uword kSkew = 40;
  arma::vec buffer;
  double* first;
  double* second;
  explicit RowSums(arma::uword N)
      : buffer(2 * N + kSkew, arma::fill::zeros), first(buffer.memptr()), second(buffer.memptr() + N + kSkew) {}
};

}  // namespace ag
