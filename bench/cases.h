// The benchmark cases of `autograd bench`, each a function that measures one
// thing and reports what the table prints. bench/peer_torch.py runs the same
// cases, under the same names, in PyTorch.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "bench/harness.h"

namespace bench {

struct Result {
  std::string name;          // "layernorm_fused"
  std::string shape;         // "4096x768"
  Timing time;
  long long saved_bytes = -1;  // tape.saved_bytes() after the forward; -1: not a tape case
  long long new_bytes = -1;    // of those, tensors the op created (not references to its inputs)
  // The least memory traffic the case must cause (memory-bound cases), else 0:
  // bytes it must read and bytes it must write.
  double read_bytes = 0, write_bytes = 0;
  // The bound, measured: the median time of that traffic as pure passes (sums
  // over what the case reads, non-temporal fills of what it writes) on the
  // case's own buffers, timed right after the case in the same round; 0: none.
  double bound_s = 0;
  // Ours / the bound in each round, least and largest (merge_rounds); the
  // median of those ratios is time.median_s / bound_s.
  double over_bound_min = 0, over_bound_max = 0;
  // The *_kernel rows: the kernels' own traffic as pure passes (8 matrix
  // transfers: their four sweeps' reads and fills), timed the same way; 0: none.
  double sweeps_s = 0;
  double gbps = 0;           // (read_bytes + write_bytes) / median time
  std::size_t ops = 0;       // ops per run when the figure of interest is time per op
  std::string note;
};

struct Case {
  std::string name, shape;
  std::function<Result(const Plan&)> run;
};

// "layernorm_fused/4096x768": what --case matches (the whole id or the name alone).
std::string case_id(const std::string& name, const std::string& shape);

// Every case, the memory-bandwidth references first. quick: smaller buffers and norm shapes.
std::vector<Case> all_cases(bool quick);

// Pieces of all_cases, one per file.
// read (a sum), write (a fill), write_nt (a fill with non-temporal stores), copy.
std::vector<Case> bandwidth_cases(bool quick);
std::vector<Case> norm_cases(bool quick);
Case overhead_case();
Case digits_epoch_case();
Case gpt_step_case(bool fused);  // bench/cases_gpt.cpp
// mlp_grad/tangent/hvp and gpt_grad/tangent/hvp: forward mode's overhead (bench/cases_forward.cpp).
std::vector<Case> forward_cases();

// The sum of n doubles, read at memory's rate: vector lanes and independent
// chains, so the adds keep up with memory and with L2 (a bound's read pass).
double sum_of(const double* v, std::size_t n);

// Writes n doubles with non-temporal stores, as the kernels write large outputs (a bound's write pass).
void fill_streamed(double* out, std::size_t n, double value);

// The memory policy is the program's (autograd/memory.h; `autograd bench --malloc`):
// by default freed memory is kept for reuse. The peer gets the same policy through
// kKeepMemoryEnv, so the ratio compares the work, not the page faults.
extern const char* const kKeepMemoryEnv;

// Buffers for the bandwidth cases and the cold-cache eviction: 1.25 x the
// last-level cache (from sysfs), at least 256 MB, so nothing they touch stays cached.
std::size_t large_buffer_bytes();

// The plan the bandwidth cases run with: the caches evicted before every run,
// whatever --caches says, so a buffer the case has just written is not read
// back from the last-level cache (480 MB here). Warm, non-temporal stores to
// such lines ran at 2.2-6.8 GB/s in `--case` runs, 21-23 evicted. Whole warm
// runs still measure write_nt at 2.5 GB/s in some processes and 21-23 in
// others (the same binary; where the pages land). These rows are the
// machine's references; no bound is priced at their rates any more
// (Result::bound_s is measured beside each case, on its own buffers).
Plan from_memory(const Plan& plan);

}  // namespace bench
