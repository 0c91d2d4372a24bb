// Files and flags a hostile user or a careless instructor hands the command
// line (issue 25, cases 8 to 16): a GPT checkpoint that claims 100,000 layers,
// a model too big for memory, temperatures and weights that overflow, a
// vocabulary of control characters, FIFOs and devices for files, numbers that
// cannot be used, and run folders holding symlinks and FIFOs. Each is one line
// on stderr, exit 2, nothing written, and never a large allocation.
#define BOOST_TEST_MODULE hostile_files
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "autograd/parameter.h"
#include "nn/embedding.h"
#include "nn/gpt.h"
#include "tests/cli_run.h"
#include "train/checkpoint.h"
#include "train/lm_memory.h"

namespace fs = std::filesystem;
using cli_test::has;
using cli_test::quote;
using cli_test::run;

namespace {

const fs::path& scratch() {
  static const fs::path dir = fs::temp_directory_path() / ("ag-hostile-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}
std::string path_of(const std::string& name) { return (scratch() / name).string(); }

struct Cleanup {
  ~Cleanup() { fs::remove_all(scratch()); }
};

// A 1 GB address-space limit turns a large allocation into a failure (std::bad_alloc,
// exit 1) instead of gigabytes. AddressSanitizer reserves terabytes of address space
// and cannot start under it, so the sanitizer tree runs the same commands unlimited
// (as test_cli_eval does); the Release tree's run is the one that catches gigabytes.
#if defined(__SANITIZE_ADDRESS__)
const std::string kLimit = "OPENBLAS_NUM_THREADS=1";
#else
const std::string kLimit = "ulimit -v 1000000; OPENBLAS_NUM_THREADS=1";
#endif
const std::string kTiny = " --layers 1 --heads 2 --width 8 --context 8 --epochs 1 --batch-size 8 --warmup 2";

// Exit 2, exactly one line on stderr containing `expect`, nothing on stdout.
// `wrapper` goes before the program ("timeout 60": a run that blocks fails instead of hanging the suite).
void expect_refused(const std::string& args, const std::string& expect, const std::string& wrapper = "") {
  const cli_test::Run r = run(args, kLimit + (wrapper.empty() ? "" : " " + wrapper));
  BOOST_TEST(r.status == 2, args << " -> " << r.status << ": " << r.err);
  BOOST_TEST((!r.err.empty() && r.err.find('\n') == r.err.size() - 1), args << " -> [" << r.err << "]");
  BOOST_TEST(has(r.err, expect), args << " -> " << r.err << " lacks " << expect);
  BOOST_TEST(r.out.empty(), args << " printed: " << r.out);
}

// A tiny GPT trained once on forty made-up names over seven letters.
std::string gpt_checkpoint() {
  const std::string out = path_of("gpt");
  if (!fs::exists(out + "/model.ckpt")) {
    std::ofstream names(path_of("names.txt"));
    const char* parts[] = {"ab", "ce", "fa", "de", "bo", "ca", "ed", "fo"};
    for (int i = 0; i < 40; ++i) names << parts[i % 8] << parts[(i * 3 + 1) % 8] << "\n";
    names.close();
    const cli_test::Run r = run("train --model gpt --dataset " + quote(path_of("names.txt")) + kTiny + " --out " + quote(out),
                                "OPENBLAS_NUM_THREADS=1");
    BOOST_TEST_REQUIRE(r.status == 0, r.err);
  }
  return out + "/model.ckpt";
}

// The checkpoint's metadata with each "key=" line replaced, and its records
// passed through `edit`, written with a fresh checksum, as a forger would.
template <class Edit>
std::string forged(const std::string& name, const std::vector<std::pair<std::string, std::string>>& lines, Edit edit) {
  const ag::Checkpoint ckpt = ag::read_checkpoint(gpt_checkpoint());
  std::istringstream in(ckpt.metadata);
  std::string metadata;
  for (std::string l; std::getline(in, l);) {
    for (const auto& [key, value] : lines) {
      if (l.rfind(key + "=", 0) == 0) l = key + "=" + value;
    }
    metadata += l + "\n";
  }
  std::vector<ag::Parameter> params;
  for (const ag::CheckpointEntry& e : ckpt.params) {
    ag::CheckpointEntry kept = e;
    if (edit(kept)) params.emplace_back(kept.name, kept.value);
  }
  std::vector<const ag::Parameter*> view;
  for (const ag::Parameter& p : params) view.push_back(&p);
  std::ofstream(path_of(name), std::ios::binary) << ag::encode_checkpoint(view, metadata);
  return path_of(name);
}
std::string forged(const std::string& name, const std::vector<std::pair<std::string, std::string>>& lines) {
  return forged(name, lines, [](ag::CheckpointEntry&) { return true; });
}

std::string hex(const std::string& bytes) {
  std::string out;
  const char* digits = "0123456789abcdef";
  for (unsigned char c : bytes) (out += digits[c >> 4]) += digits[c & 15];
  return out;
}

}  // namespace

BOOST_GLOBAL_FIXTURE(Cleanup);

// Case 8. Before: the check looked at four records (the embeddings, the last
// block's qkv, the head), so a 5.9 KB file with layers=100000 made `sample`
// allocate 100,000 blocks (2.4 GB or more, or std::bad_alloc) before refusing.
BOOST_AUTO_TEST_CASE(a_gpt_checkpoint_claiming_100000_layers_is_refused_from_its_records_under_a_memory_limit) {
  for (const std::string layers : {"100000", "1048576"}) {
    const std::string last = "h" + std::to_string(std::stoul(layers) - 1) + ".attn.qkv.weight";
    const std::string bomb = forged("layers-" + layers + ".ckpt", {{"layers", layers}}, [&](ag::CheckpointEntry& e) {
      if (e.name == "h0.attn.qkv.weight") e.name = last;  // the one block record the old check read
      return e.name == "wte.weight" || e.name == "wpe.weight" || e.name == last || e.name == "head.weight";
    });
    BOOST_TEST(fs::file_size(bomb) < 8000u);
    expect_refused("sample --model " + quote(bomb), "the file holds no 'h0.attn.qkv.weight'");
  }
  // Blocks renumbered (h1 where h0 should be) are refused too.
  expect_refused("sample --model " + quote(forged("fewer.ckpt", {{"layers", "1"}}, [](ag::CheckpointEntry& e) {
                   if (e.name.rfind("h0.", 0) == 0) e.name = "h1." + e.name.substr(3);
                   return true;
                 })),
                 "the file holds no 'h0.attn.qkv.weight'");
}

// Case 9. Before: every flag was in range, the model grew to 5.8 GB and ended in std::bad_alloc.
BOOST_AUTO_TEST_CASE(a_gpt_too_big_for_memory_is_refused_up_front_naming_the_estimate_and_the_limit) {
  gpt_checkpoint();  // writes names.txt
  const std::string out = path_of("too-big");
  expect_refused("train --model gpt --dataset " + quote(path_of("names.txt")) +
                     " --layers 48 --width 1024 --heads 64 --context 1024 --batch-size 4096 --out " + quote(out),
                 "the GPT 48x1024 (64 heads, context 1024, vocab 8) needs about ");
  const cli_test::Run r = run("train --model gpt --dataset " + quote(path_of("names.txt")) +
                                  " --layers 48 --width 1024 --heads 64 --context 1024 --batch-size 4096 --out " + quote(out),
                              kLimit);
  BOOST_TEST(has(r.err, "GiB of memory (6.06e+08 parameters, "), r.err);
  BOOST_TEST(has(r.err, "the limit is 4 GiB"), r.err);
  BOOST_TEST(!fs::exists(out));  // refused before --out was made
}

// The estimate's parameter count is the model's own, for every kind of block.
BOOST_AUTO_TEST_CASE(the_memory_estimate_counts_exactly_the_parameters_a_gpt_has) {
  for (const ag::Placement placement : {ag::Placement::Pre, ag::Placement::Post, ag::Placement::None}) {
    for (const ag::Norm norm : {ag::Norm::LayerNorm, ag::Norm::RMSNorm}) {
      ag::GptSpec spec;
      spec.vocab = 11;
      spec.context = 5;
      spec.layers = 3;
      spec.block.width = 12;
      spec.block.heads = 3;
      spec.block.placement = placement;
      spec.block.norm = placement == ag::Placement::None ? ag::Norm::None : norm;
      ag::Rng rng(1);
      ag::Gpt model(spec, rng);
      BOOST_TEST(ag::gpt_parameter_count(spec) == static_cast<double>(model.parameter_count()), model.describe());
    }
  }
}

// Case 12. Before: logits / temperature overflowed to inf below about 3e-309 and
// inf - inf gave NaN probabilities: garbage words, exit 0.
BOOST_AUTO_TEST_CASE(sampling_at_a_subnormal_temperature_stays_finite_and_is_the_likeliest_line) {
  const std::string model = " --model " + quote(gpt_checkpoint()) + " --count 5 --max-length 12";
  const cli_test::Run tiny = run("sample" + model + " --temperature 1e-310", kLimit);
  const cli_test::Run small = run("sample" + model + " --temperature 1e-300 --seed 9", kLimit);
  BOOST_TEST_REQUIRE(tiny.status == 0, tiny.err);
  BOOST_TEST(tiny.out == small.out);  // both the likeliest character every time, whatever the seed
  BOOST_TEST(tiny.out.find_first_not_of("abcdefo\n") == std::string::npos, tiny.out);
}

// Case 12. Before: head weights of 1e308 gave inf logits and NaN draws at temperature 1, exit 0.
BOOST_AUTO_TEST_CASE(a_checkpoint_whose_logits_overflow_is_refused) {
  const std::string huge = forged("huge-head.ckpt", {}, [](ag::CheckpointEntry& e) {
    if (e.name == "head.weight") e.value.fill(1e308);
    return true;
  });
  expect_refused("sample --model " + quote(huge), "the model's logits are not finite (NaN or inf)");
  // Issue 34, case 14. Before: eval printed "loss nan nats per character", exit 0.
  expect_refused("eval --model " + quote(huge), "its outputs are not finite (NaN or inf), its weights overflow");
}

// Case 13. Before: the vocabulary was cut into characters and trusted: with \n and
// ESC among them, `--count 200` printed 263 lines and 36 raw ESC bytes.
BOOST_AUTO_TEST_CASE(a_vocabulary_holding_a_newline_an_escape_or_bad_utf8_is_refused) {
  const std::pair<std::string, std::string> cases[] = {
      {"\nbcdefo", "vocabulary character 1 is not text: byte 0x0a (a control character, U+000A)"},
      {"\x1b" "bcdefo", "vocabulary character 1 is not text: byte 0x1b (a control character, U+001B)"},
      {"abcdef\xc2\x9b", "vocabulary character 7 is not text: bytes 0xc2 0x9b (a C1 control character, U+009B)"},
      {"abcdef\xed\xa0\x80", "vocabulary character 7 is not text: bytes 0xed 0xa0 0x80 (a UTF-16 surrogate, U+D800)"},
      {"bacdefo", "vocabulary character 2 is out of order or repeated"},
      {"aacdefo", "vocabulary character 2 is out of order or repeated"},
  };
  int i = 0;
  for (const auto& [chars, expected] : cases) {
    const std::string ckpt = forged("vocab-" + std::to_string(i++) + ".ckpt", {{"vocabulary_hex", hex(chars)}});
    expect_refused("sample --model " + quote(ckpt), expected);
  }
}

// Case 14. Before: `sample --model FIFO` blocked forever and /dev/zero said "the file is empty".
// `timeout` ends a run that blocks, so a regression fails instead of hanging the suite.
BOOST_AUTO_TEST_CASE(a_model_or_dataset_that_is_a_fifo_a_device_or_a_directory_is_refused_without_blocking) {
  const std::string fifo = path_of("model.fifo"), csv_fifo = path_of("data.csv"), zero = path_of("zero.txt");
  BOOST_TEST_REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  BOOST_TEST_REQUIRE(::mkfifo(csv_fifo.c_str(), 0600) == 0);
  fs::create_symlink("/dev/zero", zero);  // a link to a device is what it points at
  const std::pair<std::string, std::string> cases[] = {
      {"sample --model " + quote(fifo), fifo + ": is a FIFO (a named pipe), not a checkpoint file"},
      {"eval --model " + quote(fifo), fifo + ": is a FIFO (a named pipe), not a checkpoint file"},
      {"sample --model /dev/zero", "/dev/zero: is a character device, not a checkpoint file"},
      {"sample --model " + quote(scratch().string()), ": is a directory, not a checkpoint file"},
      {"train --model gpt --dataset " + quote(zero), zero + ": is a character device, not a text file"},
      {"train --dataset " + quote(csv_fifo) + " --out " + quote(path_of("csv-fifo")), ": is a FIFO (a named pipe), not a CSV file"},
  };
  for (const auto& [args, expected] : cases) expect_refused(args, expected, "timeout 60");
}

// Case 15. Before: --weight-decay 1e308 trained and stopped with "try a smaller learning rate".
BOOST_AUTO_TEST_CASE(a_weight_decay_that_cannot_be_used_is_refused_by_name) {
  gpt_checkpoint();  // writes names.txt
  expect_refused("train --dataset xor --weight-decay 1e308 --out " + quote(path_of("wd")),
                 "--weight-decay 1e+308 with --lr 0.001: the weights shrink by lr x weight decay a step, which must be below 1");
  expect_refused("train --model gpt --dataset " + quote(path_of("names.txt")) + " --weight-decay 400 --out " + quote(path_of("wd")),
                 "--weight-decay 400 with --lr 0.003");
  BOOST_TEST(!fs::exists(path_of("wd")));
}

// Case 15. Before: Embedding(..., sd = NaN) silently made a table of NaN.
BOOST_AUTO_TEST_CASE(an_embedding_refuses_an_sd_that_is_nan_infinite_or_negative) {
  ag::Rng rng(0);
  for (const double sd : {std::nan(""), std::numeric_limits<double>::infinity(), -0.5}) {
    try {
      ag::Embedding("wte", 3, 4, rng, sd);
      BOOST_FAIL("sd " << sd << " was taken");
    } catch (const ag::Error& e) {
      BOOST_TEST(has(e.what(), "Embedding 'wte': the initial standard deviation sd must be a finite number, 0 or more"), e.what());
    }
  }
  BOOST_TEST(ag::Embedding("wpe", 3, 4, rng, 0.0).table.value().is_zero());  // sd 0 is a table of zeros
}

// Case 16. Before: a run renamed its files over a symlinked curves.png and a FIFO
// metrics.csv, though the README said such targets are refused or written in place.
BOOST_AUTO_TEST_CASE(a_symlinked_curves_png_or_a_fifo_metrics_csv_in_a_run_folder_is_refused_and_left_alone) {
  const std::string out = path_of("run"), elsewhere = path_of("elsewhere.png");
  fs::create_directories(out);
  std::ofstream(elsewhere) << "not yours";
  fs::create_symlink(elsewhere, out + "/curves.png");
  expect_refused("train --dataset xor --hidden 4 --epochs 1 --out " + quote(out),
                 "--out '" + out + "': curves.png there is a symbolic link, which a run never replaces or writes through");
  BOOST_TEST(fs::is_symlink(out + "/curves.png"));
  BOOST_TEST(cli_test::slurp(elsewhere) == "not yours");
  BOOST_TEST(!fs::exists(out + "/model.ckpt"));
  fs::remove(out + "/curves.png");
  BOOST_TEST_REQUIRE(::mkfifo((out + "/metrics.csv").c_str(), 0600) == 0);
  expect_refused("train --dataset xor --hidden 4 --epochs 1 --out " + quote(out),
                 "metrics.csv there is a FIFO, which a run never replaces or writes through", "timeout 60");
  BOOST_TEST(fs::is_fifo(out + "/metrics.csv"));
  BOOST_TEST(!fs::exists(out + "/model.ckpt"));
}
