#include "train/shards.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <string>
#include <thread>

namespace ag {

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
}

Tape& ShardRunner::tape(std::size_t k) {
  while (tapes_.size() <= k) {
    Tape& tape = tapes_.emplace_back();
    tape.keep_param_grads(true);
    tape.keep_intermediate_grads(false);  // a step reads only the parameters' gradients
  }
  return tapes_[k];
}

void ShardRunner::run(std::size_t count, const std::function<void(std::size_t, Tape&)>& work) {
  run_on(count, true, work);
}

void ShardRunner::run_each(std::size_t count, const std::function<void(std::size_t, Tape&)>& work) {
  run_on(count, false, work);
}

void ShardRunner::run_on(std::size_t count, bool tape_per_shard,
                         const std::function<void(std::size_t, Tape&)>& work) {
  const std::size_t workers = std::min<std::size_t>(static_cast<std::size_t>(threads_), count);
  const std::size_t tapes = tape_per_shard ? count : workers;
  if (tapes > 0) tape(tapes - 1);  // built here, never by two threads at once
  std::vector<std::exception_ptr> errors(count);
  std::atomic<std::size_t> next{0};
  auto worker = [&](std::size_t w) {
    for (std::size_t k; (k = next.fetch_add(1)) < count;) {
      Tape& t = tapes_[tape_per_shard ? k : w];
      try {
        t.clear();
        work(k, t);
      } catch (...) {
        errors[k] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> helpers;
  for (std::size_t w = 1; w < workers; ++w) helpers.emplace_back(worker, w);
  worker(0);
  for (std::thread& t : helpers) t.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

void ShardRunner::add_param_grads(std::size_t count) {
  for (std::size_t k = 0; k < count; ++k) tape(k).add_param_grads();
}

}  // namespace ag
