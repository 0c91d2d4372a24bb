// Both cores, the same numbers: a batch cut into shards fixed by the data.
//
// A step cuts its batch into shards of at most N samples (sequences for the
// GPT, rows for the MLP), in order; the cut depends on the batch alone, never
// on the number of threads. Each shard is recorded on its own tape, which
// keeps its parameter gradients (Tape::keep_param_grads) and frees every other
// gradient once its backward ran (Tape::keep_intermediate_grads); the shards run on up
// to `threads` threads, each taking the next shard not yet taken; then the
// gradients are added into the parameters shard 0 first, shard 1 next, ... on
// the calling thread. Every floating-point sum is therefore done in the same
// order whatever the threads did, and 1, 2 or 8 threads give the same bits.
//
// BLAS's own threads are the program's choice (autograd/blas_threads.h): the
// runner leaves them alone. `autograd` asks for one, so that the shards are
// the only threads competing for the cores.
#pragma once

#include <armadillo>

#include <cstddef>
#include <deque>
#include <functional>
#include <vector>

#include "autograd/tape.h"

namespace ag {

// The machine's cores (at least 1): the default of --threads.
int default_threads();

// `batch` cut into consecutive pieces of at most `per_shard` (at least one piece).
std::vector<arma::uvec> cut_into_shards(const arma::uvec& batch, std::size_t per_shard);

class ShardRunner {
 public:
  explicit ShardRunner(int threads);  // 1 or more
  int threads() const { return threads_; }

  // work(k, tape) for k = 0 .. count-1, tape k cleared first, on up to threads()
  // threads (the caller's among them). If shards throw, rethrows the lowest one's error.
  void run(std::size_t count, const std::function<void(std::size_t, Tape&)>& work);
  // The same, each k on the running thread's own tape (cleared first): for work
  // that leaves nothing on its tape for later, such as an evaluation's chunks.
  void run_each(std::size_t count, const std::function<void(std::size_t, Tape&)>& work);
  // Adds the parameter gradients of shards 0 .. count-1, in that order.
  void add_param_grads(std::size_t count);

 private:
  Tape& tape(std::size_t k);
  void run_on(std::size_t count, bool tape_per_shard, const std::function<void(std::size_t, Tape&)>& work);
  int threads_;
  std::deque<Tape> tapes_;  // one per shard, reused every step; a deque never moves them
};

}  // namespace ag
