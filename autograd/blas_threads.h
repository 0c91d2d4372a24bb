// How many threads OpenBLAS may split one matrix product over: a setting of
// the whole process, so the library never changes it by itself (STYLE.md, "Say
// it once"); a program asks, once, through this one function.
//
// `autograd`, the benchmarks and the tests that compare thread counts ask for
// one: the trainer's parallelism is its shards (train/shards.h), each on a
// thread of its own, and OpenBLAS's threads would split a shard's products by
// the machine and compete with the shards for the cores; with 2 threads it
// also splits some products' sums, so their last bits differ from one
// thread's (docs/lifetimes-and-threads.md). A program that does not ask keeps
// OpenBLAS's default: OPENBLAS_NUM_THREADS, else every core.
#pragma once

namespace ag {

// Sets OpenBLAS's threads (n >= 1) for the whole process. OpenBLAS is looked up
// at run time, so a build against another BLAS still links and runs: then it
// does nothing and returns false.
bool set_blas_threads(int n);

// OpenBLAS's current setting; 0 where the BLAS has none.
int blas_threads();

}  // namespace ag
