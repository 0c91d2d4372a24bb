// The machine's reference (a large copy) and the engine's fixed cost per op.
#include <dlfcn.h>
#include <malloc.h>

#include <cstring>
#include <vector>

#include "autograd/tape.h"
#include "bench/cases.h"
#include "ops/elementwise.h"

namespace bench {

void set_blas_threads(int n) {
  // Looked up at run time, so a build against another BLAS still links and runs.
  using SetThreads = void (*)(int);
  if (void* f = dlsym(RTLD_DEFAULT, "openblas_set_num_threads")) {
    reinterpret_cast<SetThreads>(f)(n);
  }
}

const char* const kKeepMemoryNote =
    "freed memory kept for reuse (M_MMAP_MAX=0, M_TRIM_THRESHOLD=2 GB), ours and the peer's alike";
const char* const kKeepMemoryEnv = "MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=2147483647";

void keep_freed_memory() {
  mallopt(M_MMAP_MAX, 0);                   // every block from the heap, none mapped afresh
  mallopt(M_TRIM_THRESHOLD, 2147483647);    // and the heap is not given back between runs
}

// Memory bandwidth: copy a buffer far larger than the caches. A copy reads and
// writes every byte once, so it moves 2 x size; LayerNorm's bound uses this rate.
Case bandwidth_case(bool quick) {
  const std::size_t mb = quick ? 64 : 256;
  return {"copy", std::to_string(mb) + " MB", [mb](const Plan& plan) {
            const std::size_t n = mb * 1024 * 1024 / sizeof(double);
            std::vector<double> src(n, 1.0), dst(n, 0.0);  // touched now: no page faults timed
            auto body = [&] {
              std::memcpy(dst.data(), src.data(), n * sizeof(double));
              keep(dst.data());
            };
            Result r;
            r.name = "copy";
            r.shape = std::to_string(mb) + " MB";
            r.time = measure({}, body, plan);
            r.min_bytes = 2.0 * double(n * sizeof(double));
            r.gbps = r.min_bytes / r.time.median_s / 1e9;
            r.note = "read + write; the bandwidth bound";
            return r;
          }};
}

// Per-op overhead: 10,000 ops on 1x1 values, alternating v = v * b and
// v = v + a, recorded, back-propagated and released. Nothing here is
// arithmetic: it is the tape's bookkeeping per node.
Case overhead_case() {
  return {"per_op_overhead", "10000 x 1x1", [](const Plan& plan) {
            constexpr std::size_t kOps = 10000;
            ag::Tape tape;
            const arma::mat a0(1, 1, arma::fill::value(0.5)), b0(1, 1, arma::fill::value(0.9999));
            auto chain = [](ag::Var a, ag::Var b) {
              ag::Var v = a;
              for (std::size_t i = 0; i < kOps; i += 2) {
                v = v * b;
                v = v + a;
              }
              return v;
            };
            auto body = [&] {
              ag::Var a = tape.leaf(a0, "a"), b = tape.leaf(b0, "b");
              tape.backward(chain(a, b));
              consume(a.grad());
              consume(b.grad());
              tape.clear();  // releasing the graph is part of the cost
            };
            Result r;
            r.name = "per_op_overhead";
            r.shape = "10000 x 1x1";
            chain(tape.leaf(a0, "a"), tape.leaf(b0, "b"));
            r.saved_bytes = static_cast<long long>(tape.saved_bytes());
            tape.clear();
            r.time = measure({}, body, plan);
            r.ops = kOps;
            return r;
          }};
}

}  // namespace bench
