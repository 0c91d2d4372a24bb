#include "train/shards.h"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <string>
#include <thread>

namespace ag {

namespace {
// OpenBLAS's setter, when OpenBLAS is the BLAS the process loaded; other BLAS builds have no threads of their own.
void use_one_blas_thread() {
  using SetThreads = void (*)(int);
  if (void* f = dlsym(RTLD_DEFAULT, "openblas_set_num_threads")) reinterpret_cast<SetThreads>(f)(1);
}
}  // namespace

int default_threads() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

std::vector<arma::uvec> cut_into_shards(const arma::uvec& batch, std::size_t per_shard) {
  if (per_shard == 0) throw Error("cut_into_shards: a shard needs room for at least one sample");
  std::vector<arma::uvec> shards;
  for (arma::uword first = 0; first < batch.n_elem || shards.empty(); first += per_shard) {
    const arma::uword last = std::min<arma::uword>(first + per_shard, batch.n_elem);
    shards.push_back(last > first ? arma::uvec(batch.subvec(first, last - 1)) : arma::uvec());
  }
  return shards;
}

ShardRunner::ShardRunner(int threads) : threads_(threads) {
  if (threads < 1) throw Error("threads: need at least 1, got " + std::to_string(threads));
  use_one_blas_thread();
}

Tape& ShardRunner::tape(std::size_t k) {
  while (tapes_.size() <= k) tapes_.emplace_back().keep_param_grads(true);
  return tapes_[k];
}

void ShardRunner::run(std::size_t count, const std::function<void(std::size_t, Tape&)>& work) {
  for (std::size_t k = 0; k < count; ++k) tape(k);  // built here, never by two threads at once
  std::vector<std::exception_ptr> errors(count);
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t k; (k = next.fetch_add(1)) < count;) {
      try {
        tapes_[k].clear();
        work(k, tapes_[k]);
      } catch (...) {
        errors[k] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> helpers;
  const std::size_t extra = std::min<std::size_t>(static_cast<std::size_t>(threads_), count);
  for (std::size_t t = 1; t < extra; ++t) helpers.emplace_back(worker);
  worker();
  for (std::thread& t : helpers) t.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

void ShardRunner::add_param_grads(std::size_t count) {
  for (std::size_t k = 0; k < count; ++k) tape(k).add_param_grads();
}

}  // namespace ag
