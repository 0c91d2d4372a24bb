// Both cores, the same numbers (train/shards.h): a batch is cut into shards
// fixed by the data, each recorded on its own tape on one of the threads, and
// the shards' gradients are added in shard order. So 1 and 2 threads give the
// same loss curve and the same weights, bit for bit.
#define BOOST_TEST_MODULE threads
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "autograd/blas_threads.h"
#include "autograd/rng.h"
#include "ops/ops.h"
#include "train/table_task.h"
#include "train/text_task.h"
#include "train/trainer.h"
#include "train/shards.h"

namespace fs = std::filesystem;
using namespace ag;

namespace {
fs::path scratch() {
  static const fs::path dir = fs::temp_directory_path() / ("ag-threads-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}
struct Cleanup {
  ~Cleanup() { fs::remove_all(scratch()); }
};

// 300 made-up words: batches of 32 lines make 4 shards of 8 sequences.
std::string corpus() {
  const fs::path p = scratch() / "words.txt";
  Rng rng(7);
  std::ofstream out(p);
  for (int line = 0; line < 300; ++line) {
    const int n = 2 + static_cast<int>(rng.below(9));
    for (int i = 0; i < n; ++i) out << "abcdefghij"[rng.below(10)];
    out << "\n";
  }
  return p.string();
}

RunConfig tiny_gpt(int threads) {
  RunConfig c = gpt_config();
  c.dataset = corpus();
  c.layers = 2;
  c.heads = 2;
  c.width = 16;
  c.context = 8;
  c.epochs = 2;
  c.batch_size = 32;
  c.warmup = 4;
  c.validation_fraction = 0.5;  // 150 lines: three evaluation chunks of 64 sequences
  c.threads = threads;
  return c;
}

void same_parameters(Module& a, Module& b) {
  const std::vector<Parameter*> pa = a.parameters(), pb = b.parameters();
  BOOST_TEST_REQUIRE(pa.size() == pb.size());
  for (std::size_t i = 0; i < pa.size(); ++i) {
    BOOST_TEST(arma::approx_equal(pa[i]->value(), pb[i]->value(), "absdiff", 0.0), pa[i]->name());
  }
}
}  // namespace

BOOST_GLOBAL_FIXTURE(Cleanup);

BOOST_AUTO_TEST_CASE(a_batch_is_cut_by_the_data_into_shards_in_order) {
  const arma::uvec batch = arma::regspace<arma::uvec>(10, 29);  // 20 samples
  const std::vector<arma::uvec> shards = cut_into_shards(batch, 8);
  BOOST_TEST_REQUIRE(shards.size() == 3u);
  BOOST_TEST(shards[0](0) == 10u);
  BOOST_TEST(shards[1](0) == 18u);
  BOOST_TEST(shards[2].n_elem == 4u);
  BOOST_TEST(shards[2](3) == 29u);
  BOOST_CHECK_THROW(cut_into_shards(batch, 0), Error);
}

// Both shards wait for each other: this passes only if they really run at the same time.
BOOST_AUTO_TEST_CASE(two_threads_run_two_shards_at_once) {
  ShardRunner runner(2);
  std::atomic<int> started{0};
  std::atomic<bool> met{true};
  runner.run(2, [&](std::size_t, Tape&) {
    ++started;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);  // generous: the machine may be loaded
    while (started.load() < 2 && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
    if (started.load() < 2) met = false;
  });
  BOOST_TEST(met.load());
}

// Shard 0 finishes last, yet its gradient is added first: (1 + 1e16) - 1e16 is 0 in
// shard order, and any other order (the order the shards finished: 1e16 - 1e16 + 1) gives 1.
BOOST_AUTO_TEST_CASE(gradients_are_added_in_shard_order_not_in_the_order_shards_finish) {
  Parameter p("w", arma::mat(1, 1, arma::fill::ones));
  const double scale[3] = {1.0, 1e16, -1e16};
  std::atomic<int> finished{0};
  ShardRunner runner(2);
  runner.run(3, [&](std::size_t k, Tape& tape) {
    if (k == 0) {
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);  // generous: the machine may be loaded
      while (finished.load() < 2 && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
    }
    tape.backward(mul_scalar(tape.param(p), scale[k]));
    ++finished;
  });
  BOOST_TEST(p.grad()(0, 0) == 0.0);  // nothing added before add_param_grads
  runner.add_param_grads(3);
  BOOST_TEST(p.grad()(0, 0) == (1.0 + 1e16) - 1e16);
  BOOST_TEST((1.0 + 1e16) - 1e16 != (1e16 - 1e16) + 1.0);  // the order matters for these numbers
}

// BLAS's threads are the program's (autograd/blas_threads.h): a runner leaves them as they were.
BOOST_AUTO_TEST_CASE(a_shard_runner_leaves_the_blas_threads_as_the_program_set_them) {
  if (!set_blas_threads(2)) {
    BOOST_TEST_MESSAGE("no OpenBLAS in this process: no BLAS threads to leave alone");
    return;
  }
  BOOST_TEST_REQUIRE(blas_threads() == 2);
  {
    ShardRunner runner(2);
    runner.run(2, [](std::size_t, Tape&) {});
  }
  BOOST_TEST(blas_threads() == 2);
  set_blas_threads(1);  // this program's choice, as autograd's, for the cases below
  BOOST_TEST(blas_threads() == 1);
  BOOST_CHECK_THROW(set_blas_threads(0), Error);
}

BOOST_AUTO_TEST_CASE(an_error_in_a_shard_is_rethrown_the_lowest_first) {
  ShardRunner runner(2);
  try {
    runner.run(4, [](std::size_t k, Tape&) {
      if (k >= 1) throw Error("shard " + std::to_string(k));
    });
    BOOST_ERROR("expected an error");
  } catch (const Error& e) {
    BOOST_TEST(std::string(e.what()) == "shard 1");
  }
  BOOST_CHECK_THROW(ShardRunner(0), Error);
}

BOOST_AUTO_TEST_CASE(a_tiny_gpt_gives_the_same_loss_curve_on_one_and_two_threads_to_the_last_bit) {
  const RunConfig one = tiny_gpt(1), two = tiny_gpt(2);
  TextTask a(one, prepare_lm_data(one)), b(two, prepare_lm_data(two));
  const std::vector<Metrics> ha = train(one, a), hb = train(two, b);
  BOOST_TEST_REQUIRE(ha.size() == 1 + 8u);  // step 0, then the evaluations
  BOOST_TEST_REQUIRE(hb.size() == ha.size());
  for (std::size_t i = 0; i < ha.size(); ++i) {
    BOOST_TEST(ha[i].train_loss == hb[i].train_loss, "at evaluation " << i);
    BOOST_TEST(ha[i].val_loss == hb[i].val_loss, "at evaluation " << i);
  }
  BOOST_TEST(ha.back().val_loss < ha.front().val_loss);  // it did learn
  same_parameters(*a.model, *b.model);
}

// Dropout draws from the blocks' own streams as they run, so it keeps one thread: still the same bits.
BOOST_AUTO_TEST_CASE(with_dropout_two_threads_still_give_the_same_bits) {
  RunConfig one = tiny_gpt(1), two = tiny_gpt(2);
  one.epochs = two.epochs = 1;
  one.dropout = two.dropout = 0.1;
  TextTask a(one, prepare_lm_data(one)), b(two, prepare_lm_data(two));
  BOOST_TEST(train(one, a).back().val_loss == train(two, b).back().val_loss);
  same_parameters(*a.model, *b.model);
}

BOOST_AUTO_TEST_CASE(a_tiny_mlp_gives_the_same_loss_curve_on_one_and_two_threads_to_the_last_bit) {
  RunConfig c;
  c.dataset = "spirals";
  c.hidden = {32, 32};
  c.norm = Norm::LayerNorm;
  c.batch_size = 200;  // shards of 64, 64, 64 and 8 rows
  c.epochs = 4;
  const Dataset data = make_dataset(c.dataset, c.seed);
  c.threads = 1;
  TableTask a(c, data);
  const std::vector<Metrics> ha = train(c, a);
  c.threads = 2;
  TableTask b(c, data);
  const std::vector<Metrics> hb = train(c, b);
  BOOST_TEST_REQUIRE(ha.size() == 1 + 4u);  // epoch 0 (before any step), then epochs 1-4
  for (std::size_t i = 0; i < ha.size(); ++i) {
    BOOST_TEST(ha[i].train_loss == hb[i].train_loss, "epoch " << i);
    BOOST_TEST(ha[i].val_loss == hb[i].val_loss, "epoch " << i);
    BOOST_TEST(ha[i].train_accuracy == hb[i].train_accuracy, "epoch " << i);
  }
  same_parameters(a.model, b.model);
}
