// How the fused norm kernels (ops/norm_kernels.cpp) walk a column-major
// matrix: the machinery, kept out of the kernels so that they show the math.
//
// - Lanes: a vector of doubles as wide as the build's vector registers, taken
//   down a column (consecutive rows). A row's arithmetic is the same IEEE
//   operations in one lane as in a scalar loop, so the vector code computes
//   the specification's bits; rows_of runs one body as vectors and, for the
//   rows left over, as scalars.
// - in_groups: the columns a few at a time, so a per-row value (a sum, mean,
//   rstd) is loaded and stored once for the group instead of once a column.
// - RowSums: two per-row sums in one buffer, skewed so they do not share cache sets.
// - put: the output, streamed past the caches when it is too large to stay
//   there (non-temporal stores), else ordinary stores.
// - sweep_plan: the numbers these choices need.
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

// The build's vector width in doubles, and how many vector registers it has.
#if defined(__AVX512F__)
inline constexpr std::size_t kLanes = 8, kVectorRegisters = 32;
#elif defined(__AVX__)
inline constexpr std::size_t kLanes = 4, kVectorRegisters = 16;
#else
inline constexpr std::size_t kLanes = 2, kVectorRegisters = 16;  // SSE2, or the compiler's generic vectors (WebAssembly)
#endif

// kLanes doubles: + - * / act lane by lane (GCC's and Clang's vector extension).
typedef double Lanes __attribute__((vector_size(kLanes * sizeof(double))));

// A kernel's per-row body is written once for T = Lanes (kLanes rows) and
// T = double (one row): load<T>, broadcast<T> and put<T> read, spread and
// write either.
template <class T>
inline T load(const double* p) {
  T v;
  std::memcpy(&v, p, sizeof v);  // unaligned: a plain vector load
  return v;
}
template <class T>
inline T broadcast(double a) {
  if constexpr (std::is_same_v<T, double>) {
    return a;
  } else {
    return T{} + a;
  }
}
inline double lane_sum(Lanes v) {
  double s = 0;
  for (std::size_t l = 0; l < kLanes; ++l) s += v[l];
  return s;
}
// A sum down a column kept in lanes: a vector adds lane by lane, a single row into lane 0.
template <class T>
inline void add_into(Lanes& acc, T v) {
  if constexpr (std::is_same_v<T, double>) {
    acc[0] += v;
  } else {
    acc += v;
  }
}

// Writes v at p; streamed, past the caches (p is then aligned to a vector:
// rows_of's head sees to that).
template <class T>
inline void put(double* p, T v, bool stream) {
  if constexpr (std::is_same_v<T, Lanes>) {
    if (stream) {
#if defined(__AVX512F__)
      _mm512_stream_pd(p, reinterpret_cast<__m512d&>(v));
      return;
#elif defined(__AVX__)
      _mm256_stream_pd(p, reinterpret_cast<__m256d&>(v));
      return;
#elif defined(__SSE2__)
      _mm_stream_pd(p, reinterpret_cast<__m128d&>(v));
      return;
#endif
    }
  }
  std::memcpy(p, &v, sizeof v);
}

// Orders the streaming stores before anything later (they are weakly ordered).
inline void stream_fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

// body(i, T{}) for the rows 0 .. N-1: kLanes at a time as T = Lanes, and the
// rest one at a time as T = double. With `aligned_to` (an output column that
// is streamed), the rows before its first vector-aligned row go one at a time
// too, so that every vector put lands on a whole aligned vector.
template <class Body>
void rows_of(arma::uword N, Body body, const double* aligned_to = nullptr) {
  arma::uword i = 0;
  if (aligned_to != nullptr) {
    for (; i < N && reinterpret_cast<std::uintptr_t>(aligned_to + i) % sizeof(Lanes) != 0; ++i) body(i, double{});
  }
  for (; i + kLanes <= N; i += kLanes) body(i, Lanes{});
  for (; i < N; ++i) body(i, double{});
}

// What the sweeps' choices follow, read once from the machine (ops/sweeps.cpp).
struct SweepPlan {
  // Outputs of at least this many bytes are streamed. A constant, measured
  // on both CPUs this project runs on: 4 MiB was twice the Intel Xeon's L2;
  // on the AMD EPYC (1 MiB L2) 2.4 MB outputs ran faster not streamed and
  // 6.3 MB ones streamed (docs/performance.md). No multiple of the L2 fits both.
  std::size_t stream_bytes;
  // Columns a multiple of this many bytes apart map to the same L2 sets (the
  // L2's size over its ways: a set is picked by the address bits below it).
  // Four such columns from x and four from dy, with what the prefetcher
  // fetches ahead of each, evicted each other on the Xeon, so there the
  // sweeps take them two at a time (l2_pairs). On both AMD EPYCs measured
  // (families 25 and 26: 1 MiB L2s) groups of four were as fast or faster
  // there (16384x1024: 38-41 ms against 49-55 in pairs on family 25), so
  // they keep the L1d's width: no rule from the L2's size and ways fits
  // both (the Xeon's L2 has more ways, not fewer), and pairs follow the
  // vendor whose L2 was measured to need them.
  std::size_t alias_stride;
  bool l2_pairs;
  // Columns a group takes at most: as many as the backward's first sweep can
  // hold in registers (per column two sums and gamma, besides the row's four
  // values and the temporaries): 8 with 32 vector registers, 4 with 16.
  arma::uword group;
  // The same for the L1d: columns a multiple of l1_alias_stride bytes apart
  // (its size over its ways: 4 KiB on every CPU met) start in the same L1 set,
  // and a group's columns of every matrix the sweep reads (one stream each)
  // must fit its ways: l1_group below. On the AMD EPYC (Zen 4: 32 KiB, 8-way)
  // the backward's groups of eight at 4096 rows (x and dy: 16 streams) ran
  // 1.2-1.3x the time of groups of four, and the forward's (x alone: 8
  // streams) 0.75-0.98x the time of fours (docs/performance.md); columns of
  // other lengths are spread over the sets.
  std::size_t l1_alias_stride;
  arma::uword l1_ways;
};
// alias_stride and l1_alias_stride from this machine's L2 and L1d, 128 KiB and
// 4 KiB where it says nothing; l1_ways from the L1d (8 where unknown).
const SweepPlan& sweep_plan();

// How many matrices a sweep reads column by column: x (the statistics, the
// forward's output) or x and dy (the backward's two sweeps).
enum class Reads : arma::uword { X = 1, XAndDy = 2 };

// Columns a group takes where they alias in the L1d: the largest power of two
// whose streams (one per column of each matrix read) fit the L1d's ways.
inline arma::uword l1_group(const SweepPlan& plan, Reads reads) {
  const arma::uword streams_per_column = static_cast<arma::uword>(reads);
  arma::uword width = 1;
  while (2 * width * streams_per_column <= plan.l1_ways) width *= 2;
  return width;
}

inline bool streamed(const arma::mat& out) { return out.n_elem * sizeof(double) >= sweep_plan().stream_bytes; }

template <arma::uword Width, class Step>
void in_groups_of(arma::uword& j, arma::uword D, Step step) {
  for (; j + Width <= D; j += Width) step(j, std::integral_constant<arma::uword, Width>{});
}

// step(j, group) for the columns first .. D-1 of matrices of N rows that the
// sweep `reads`: j a group's first column and decltype(group)::value its
// width, the plan's group width (two where the columns alias in the L2 and
// l2_pairs, at most l1_group where they alias in the L1d) while that many are
// left, then 4, 2 and 1 for the rest. A row's sums still add column after
// column, in the order one column at a time would, so grouping changes no bit
// of them. `aligned` false (a streamed output whose columns start at
// different offsets from a vector boundary, N not a multiple of kLanes): one
// column at a time, so that each finds its own aligned rows.
template <class Step>
void in_groups(Reads reads, arma::uword N, arma::uword first, arma::uword D, Step step, bool aligned = true) {
  const SweepPlan& plan = sweep_plan();
  arma::uword j = first;
  if (!aligned) {
    in_groups_of<1>(j, D, step);
    return;
  }
  const std::size_t column = N * sizeof(double);
  const arma::uword width = plan.l2_pairs && column % plan.alias_stride == 0 ? 2
                            : column % plan.l1_alias_stride == 0              ? std::min(plan.group, l1_group(plan, reads))
                                                                              : plan.group;
  if (width >= 8) in_groups_of<8>(j, D, step);
  if (width >= 4) in_groups_of<4>(j, D, step);
  in_groups_of<2>(j, D, step);
  in_groups_of<1>(j, D, step);
}

// Whether a streamed output's columns share their offset from a vector
// boundary (then a group's rows_of head is the same for all of them).
inline bool columns_aligned_alike(const arma::mat& out, bool stream) {
  return !stream || out.n_rows * sizeof(double) % sizeof(Lanes) == 0;
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

// One column: out[i] = value for i < n, streamed or not, as the kernels
// write (the bench's bound times its non-temporal fills with this).
inline void fill_column(double* out, arma::uword n, double value, bool stream) {
  rows_of(n, [&](arma::uword i, auto row) { put(out + i, broadcast<decltype(row)>(value), stream); }, stream ? out : nullptr);
  if (stream) stream_fence();
}

}  // namespace ag
