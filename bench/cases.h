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
  double min_bytes = 0;      // bytes the case must move at least (memory-bound cases), else 0
  double gbps = 0;           // min_bytes / median time (the copy: its own bandwidth)
  std::size_t ops = 0;       // ops per run when the figure of interest is time per op
  std::string note;
};

struct Case {
  std::string name, shape;
  std::function<Result(const Plan&)> run;
};

// "layernorm_fused/4096x768": what --case matches (the whole id or the name alone).
std::string case_id(const std::string& name, const std::string& shape);

// Every case, the memory-bandwidth reference first. quick: smaller copy and norm shapes.
std::vector<Case> all_cases(bool quick);

// Pieces of all_cases, one per file.
Case bandwidth_case(bool quick);
std::vector<Case> norm_cases(bool quick);
Case overhead_case();
Case digits_epoch_case();

// Makes BLAS single-threaded (OpenBLAS reads OPENBLAS_NUM_THREADS only at load time).
void set_blas_threads(int n);

// glibc returns large freed blocks to the kernel (munmap, trimming the heap),
// so the next run of a case page-faults its matrices in again: on this kind of
// VM that costs more than LayerNorm itself. keep_freed_memory() makes this
// process keep and reuse freed memory (no mmap, no trimming); the peer gets
// the same policy through kKeepMemoryEnv, so the ratio compares the work.
void keep_freed_memory();
extern const char* const kKeepMemoryNote;  // what the table's header says
extern const char* const kKeepMemoryEnv;   // the same policy for another process

}  // namespace bench
