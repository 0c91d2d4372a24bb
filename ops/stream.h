// Non-temporal ("streaming") stores for outputs too large to stay in cache.
//
// An ordinary store first reads the destination line into the cache (a
// read-for-ownership), so writing an N x D output that no cache can hold
// costs a read and a write of it. A streaming store skips that read: fused
// LayerNorm 4096x768 forward + backward took 20% less time with y and dx
// streamed (bench/README.md). Below a few MB the output stays in cache for
// the next op to read, and an ordinary store is faster, so the kernels
// stream only large outputs (kStreamBytes).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

namespace ag {

// Outputs of at least this many bytes are streamed (twice a 2 MB L2).
constexpr std::size_t kStreamBytes = std::size_t{4} << 20;

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
// after another: each loop is then a plain sweep the compiler vectorises.
// Filled row by row there too, GCC 12 vectorised none of the grouped loops
// (-fopt-info-vec), and fused LayerNorm 64x768 took 161 us instead of 120
// (the kernels alone, forward + backward).
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

}  // namespace ag
