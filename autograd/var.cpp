// Var's checks and the tokens they read: how a Var knows whether its tape is
// alive without touching it (autograd/tape.h, "How long a Var lives").
#include <atomic>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "autograd/tape.h"
#include "autograd/tape_token.h"

namespace ag {

std::uint64_t next_generation() {
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

namespace {

// Tokens are recycled, never freed: a Var may outlive every tape, static ones included.
struct TokenPool {
  std::mutex mutex;
  std::deque<TapeToken> tokens;  // emplace_back never moves an element
  std::vector<TapeToken*> free;
};
TokenPool& token_pool() {
  static TokenPool* pool = new TokenPool;  // deliberately never destroyed
  return *pool;
}
TapeToken* acquire_token() {
  TokenPool& pool = token_pool();
  std::lock_guard<std::mutex> lock(pool.mutex);
  if (pool.free.empty()) return &pool.tokens.emplace_back();
  TapeToken* token = pool.free.back();
  pool.free.pop_back();
  return token;
}
void release_token(TapeToken* token) {
  token->generation.store(0, std::memory_order_release);
  TokenPool& pool = token_pool();
  std::lock_guard<std::mutex> lock(pool.mutex);
  pool.free.push_back(token);
}
}  // namespace

Tape::Tape() : token_(acquire_token()), generation_(next_generation()) {
  token_->first.store(generation_, std::memory_order_relaxed);
  token_->generation.store(generation_, std::memory_order_release);
}

Tape::~Tape() { release_token(token_); }

void Var::check_live(const char* what) const {
  if (tape == nullptr || token == nullptr) {
    throw Error(std::string(what) + ": this handle is empty (it was never recorded on a tape)");
  }
  const std::uint64_t now = token->generation.load(std::memory_order_acquire);
  // The hot path: the tape is alive and in this Var's generation (so the node is
  // there: clear() and rewind() each start a new one); one load and compare.
  if (now == generation && id < tape->size()) return;
  const std::string node = "node " + std::to_string(id);
  if (now != 0 && generation >= token->first.load(std::memory_order_relaxed)) {
    // The tape is alive: it was cleared or rewound since. A rewind keeps the
    // nodes before its mark, so the tape itself decides (and names which).
    tape->check(*this, what);
    return;
  }
  throw Error(std::string(what) + ": the value (" + node +
              ") belongs to a tape that was destroyed; a Var lives no longer than its Tape");
}

const arma::mat& Var::value() const {
  check_live("Var");
  return tape->value(id);  // check_live checked what Tape::value(Var) would
}
const arma::mat& Var::grad() const {
  check_live("Var");
  return tape->grad(*this);
}
double Var::item() const {
  const arma::mat& v = value();
  if (v.n_elem != 1) throw Error("item: the value is " + shape_str(v) + ", not 1x1");
  return v(0, 0);
}

}  // namespace ag
