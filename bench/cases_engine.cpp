// The machine's memory bandwidth (read, write, copy) and the engine's fixed cost per op.
#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "autograd/machine.h"
#include "autograd/memory.h"
#include "autograd/tape.h"
#include "bench/cases.h"
#include "ops/elementwise.h"
#include "ops/sweeps.h"

namespace bench {

const char* const kKeepMemoryEnv = "MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=2147483647 GLIBC_TUNABLES=glibc.malloc.mxfast=0";

std::size_t large_buffer_bytes() {
  return std::max<std::size_t>(std::size_t{256} << 20, ag::cache_sizes().l3 / 4 * 5);
}

Plan from_memory(const Plan& plan) {
  Plan p = plan;
  p.cold = true;
  if (p.evict_bytes == 0) p.evict_bytes = large_buffer_bytes();
  return p;
}

namespace {

// One bandwidth case over buffers of `bytes`: `body` reads `read` and writes
// `write` bytes of them per run.
Case bandwidth_case(const std::string& name, std::size_t bytes, double read, double write,
                    const std::string& note, std::function<void(std::vector<double>&, std::vector<double>&)> body) {
  const std::string shape = std::to_string(bytes >> 20) + " MB";
  return {name, shape, [=](const Plan& plan) {
            const std::size_t n = bytes / sizeof(double);
            // `autograd bench` allocates the eviction buffer before any case's
            // (cli/cmd_bench.cpp): allocated after ours, a standalone
            // non-temporal fill ran at 2.4 GB/s instead of 16-22 every time.
            const Plan cold = from_memory(plan);
            std::vector<double> a(n, 1.0), b(write > 0 && read > 0 ? n : 0, 0.0);  // touched now: no page faults timed
            ag::back_heap_with_huge_pages();  // the pages the tape's matrices get from Tape::clear()
            Result r;
            r.name = name;
            r.shape = shape;
            r.time = measure({}, [&] { body(a, b); }, cold);
            r.read_bytes = read * double(bytes);
            r.write_bytes = write * double(bytes);
            r.gbps = (r.read_bytes + r.write_bytes) / r.time.median_s / 1e9;
            r.note = note;
            return r;
          }};
}

}  // namespace

// Four chains of four lanes (GCC's vector extension: one AVX add each): one
// scalar chain would be bound by the add's latency, and the compiler may not
// reorder a floating-point sum into lanes by itself.
double sum_of(const double* v, std::size_t n) {
  typedef double Lanes __attribute__((vector_size(32)));
  Lanes acc[4] = {};
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    for (std::size_t k = 0; k < 4; ++k) {
      Lanes x;
      std::memcpy(&x, v + i + 4 * k, sizeof x);  // an unaligned load
      acc[k] += x;
    }
  }
  const Lanes all = (acc[0] + acc[1]) + (acc[2] + acc[3]);
  double s = all[0] + all[1] + all[2] + all[3];
  for (; i < n; ++i) s += v[i];
  return s;
}

void fill_streamed(double* out, std::size_t n, double value) {
  ag::fill_column(out, n, value, true);
}

// The machine's references, each on buffers larger than the last-level cache:
// LayerNorm's bound prices its reads at `read` and its writes at `write_nt`
// (the kernels stream large outputs); `write` and `copy` show what ordinary
// stores cost (each store first reads its line: a read-for-ownership).
std::vector<Case> bandwidth_cases(bool quick) {
  const std::size_t bytes = quick ? std::size_t{64} << 20 : large_buffer_bytes();
  return {
      bandwidth_case("read", bytes, 1, 0, "sum: the read rate", [](std::vector<double>& a, std::vector<double>&) {
        double s = sum_of(a.data(), a.size());
        keep(&s);
      }),
      bandwidth_case("write", bytes, 0, 1, "fill, ordinary stores", [](std::vector<double>& a, std::vector<double>&) {
        std::fill(a.begin(), a.end(), 2.0);
        keep(a.data());
      }),
      bandwidth_case("write_nt", bytes, 0, 1, "fill, non-temporal stores: the write rate",
                     [](std::vector<double>& a, std::vector<double>&) {
                       fill_streamed(a.data(), a.size(), 2.0);
                       keep(a.data());
                     }),
      bandwidth_case("copy", bytes, 1, 1, "memcpy: read + write", [](std::vector<double>& a, std::vector<double>& b) {
        std::memcpy(b.data(), a.data(), a.size() * sizeof(double));
        keep(b.data());
      }),
  };
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
