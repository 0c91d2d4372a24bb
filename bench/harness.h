// A small benchmark harness: warm-up, then the median of N timed runs.
//
// Why not Google Benchmark (libbenchmark-dev)? Its report is time and
// counters per case; ours must also show the bytes each case keeps on the
// tape, its bandwidth against a copy measured in the same run, and the ratio
// to PyTorch run from the same command, and it must run inside `autograd
// bench` rather than as a separate program. What we need from it — warm-up,
// median of repeats, a guard against the optimiser — is the 80 lines below.
#pragma once

#include <armadillo>

#include <cstddef>
#include <functional>

namespace bench {

// How long to measure. A case runs `warmup` untimed times (at least
// min_warmup_s in total), then at least `repeats` timed times; a fast case
// runs more timed repeats, up to `budget_s` of timing, so its median is stable.
struct Plan {
  int warmup = 1;
  int repeats = 7;
  double min_warmup_s = 0.05;
  double budget_s = 0.3;
  int max_repeats = 2000;
  // Cold caches: before every run, untimed, write evict_bytes (more than the
  // last-level cache holds) so the case's inputs come from memory. Warm
  // (the default): the inputs were just written by the setup, and whatever
  // of them the caches hold is read from there.
  bool cold = false;
  std::size_t evict_bytes = 0;
};

struct Timing {
  double median_s = 0;
  double min_s = 0;
  double max_s = 0;
  int repeats = 0;
};

// Times `body` only; `setup` runs untimed before each call (fresh inputs, a
// cleared tape), then, with plan.cold, the eviction. Either may be empty.
Timing measure(const std::function<void()>& setup, const std::function<void()>& body,
               const Plan& plan);

// Writes `bytes` (more than the caches hold), evicting what they held. The
// buffer is allocated by the first call and kept (it grows if a later call
// asks for more).
void evict_caches(std::size_t bytes);

// Guards against the optimiser removing work whose result nobody reads: the
// compiler must assume the pointed-to memory is read here.
inline void keep(const void* p) { asm volatile("" : : "r"(p) : "memory"); }

// Reads a result for real (one element per column) and folds it into a
// global checksum that is printed nowhere but cannot be proven unused.
void consume(const arma::mat& m);
double checksum();

}  // namespace bench
