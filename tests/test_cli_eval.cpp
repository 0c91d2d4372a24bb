// autograd eval on checkpoints whose metadata lies (recomputed checksum, so only
// the description is wrong) and on data the model cannot score: exit 2, one
// line, and never a model built from sizes the file's records do not hold.
#define BOOST_TEST_MODULE cli_eval
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "autograd/parameter.h"
#include "tests/cli_run.h"
#include "train/checkpoint.h"

namespace fs = std::filesystem;
using cli_test::has;
using cli_test::run;

namespace {

const fs::path& scratch() {
  static const fs::path dir = fs::temp_directory_path() / ("ag-cli-eval-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

struct Cleanup {
  ~Cleanup() { fs::remove_all(scratch()); }
};

std::string path_of(const std::string& name) { return (scratch() / name).string(); }

// A small moons model, trained once; `validation` is --validation.
std::string trained(const std::string& name, const std::string& validation = "0.2") {
  const std::string out = path_of(name);
  if (!fs::exists(out + "/model.ckpt")) {
    const cli_test::Run r = run("train --dataset moons --hidden 8 --epochs 1 --validation " + validation + " --out '" +
                                out + "'", "OPENBLAS_NUM_THREADS=1");
    BOOST_TEST_REQUIRE(r.status == 0, r.err);
  }
  return out + "/model.ckpt";
}

// The checkpoint at `from` with the metadata line "key=..." replaced by `line`
// and every weight times `scale`, written with a fresh checksum, as a forger would.
std::string forged(const std::string& from, const std::string& key, const std::string& line, double scale = 1) {
  const ag::Checkpoint ckpt = ag::read_checkpoint(from);
  std::istringstream in(ckpt.metadata);
  std::string metadata, l;
  while (std::getline(in, l)) metadata += (l.rfind(key + "=", 0) == 0 ? line : l) + "\n";
  std::vector<ag::Parameter> params;
  for (const ag::CheckpointEntry& e : ckpt.params) params.emplace_back(e.name, arma::mat(e.value * scale));
  std::vector<const ag::Parameter*> view;
  for (const ag::Parameter& p : params) view.push_back(&p);
  const std::string path =
      path_of(key + "-" + std::to_string(std::hash<std::string>()(line)) + (scale == 1 ? "" : "-scaled") + ".ckpt");
  std::ofstream(path, std::ios::binary) << ag::encode_checkpoint(view, metadata);
  return path;
}

// A 1 GB address-space limit makes a model built from forged sizes fail loudly
// (std::bad_alloc, exit 1) instead of quietly taking gigabytes. AddressSanitizer
// reserves terabytes of address space for its shadow memory and cannot start
// under such a limit, so the sanitizer tree checks the status and the message
// without it (the Release tree's run is the one that would catch the gigabytes).
#if defined(__SANITIZE_ADDRESS__)
const char* const kMemoryLimit = "";
#else
const char* const kMemoryLimit = "ulimit -v 1000000; ";
#endif

// Exit 2, one line on stderr containing `expect`, nothing on stdout.
void expect_refused(const std::string& args, const std::string& expect) {
  const cli_test::Run r = run(args, std::string(kMemoryLimit) + "OPENBLAS_NUM_THREADS=1");
  BOOST_TEST(r.status == 2, args << " -> " << r.status << ": " << r.err);
  BOOST_TEST((!r.err.empty() && r.err.find('\n') == r.err.size() - 1), args << " -> [" << r.err << "]");
  BOOST_TEST(has(r.err, expect), args << " -> " << r.err);
  BOOST_TEST(r.out.empty(), args << " printed: " << r.out);
}

}  // namespace

BOOST_GLOBAL_FIXTURE(Cleanup);

// Before: make_mlp built a 2 x 50,000,000 layer (3.9 GB) before load_checkpoint compared shapes.
BOOST_AUTO_TEST_CASE(forged_sizes_are_checked_against_the_records_before_the_model_is_built) {
  const std::string ckpt = trained("moons");
  expect_refused("eval --model '" + forged(ckpt, "sizes", "sizes=2,50000000,2") + "'",
                 "the model description makes 'fc1.weight' 2x50000000 but the file holds 2x8");
  expect_refused("eval --model '" + forged(ckpt, "sizes", "sizes=2,8,8,2") + "'",
                 "the model description makes 'fc2.weight' 8x8 but the file holds 8x2");
  expect_refused("eval --model '" + forged(ckpt, "sizes", "sizes=2,8,999999999") + "'", "'fc2.weight' 8x999999999");
}

// Before: stoull/stod took "-1" (as 2^64-1) and "0.2junk"; 5 reached the split and exited 1.
BOOST_AUTO_TEST_CASE(metadata_numbers_must_parse_whole_and_be_in_range) {
  const std::string ckpt = trained("moons");
  expect_refused("eval --model '" + forged(ckpt, "seed", "seed=-1") + "'", "seed '-1' is not a whole number");
  expect_refused("eval --model '" + forged(ckpt, "seed", "seed=99999999999999999999") + "'", "seed '");
  expect_refused("eval --model '" + forged(ckpt, "validation_fraction", "validation_fraction=5") + "'",
                 "validation_fraction '5' is not a number in [0, 1)");
  expect_refused("eval --model '" + forged(ckpt, "validation_fraction", "validation_fraction=0.2junk") + "'",
                 "validation_fraction '0.2junk' is not a number in [0, 1)");
  expect_refused("eval --model '" + forged(ckpt, "validation_fraction", "validation_fraction=nan") + "'",
                 "validation_fraction 'nan'");
}

// Before: mse() of 2 logits against 1 target threw an internal shape error, exit 1.
BOOST_AUTO_TEST_CASE(a_classifier_on_regression_targets_is_refused) {
  const std::string ckpt = trained("moons");
  const std::string csv = path_of("reg.csv");
  std::ofstream(csv) << "a,b,y\n0.1,0.2,0.5\n0.3,0.4,1.5\n0.5,0.6,2.5\n";
  expect_refused("eval --model '" + ckpt + "' --dataset '" + csv + "' --split all",
                 "holds regression targets (labels that are not class numbers); the model in");
}

// Before: "loss nan" for the empty validation split.
BOOST_AUTO_TEST_CASE(a_model_trained_without_validation_says_so) {
  const std::string ckpt = trained("no-validation", "0");
  expect_refused("eval --model '" + ckpt + "'",
                 "the model was trained without a validation set (validation_fraction=0); use --split train or --split all");
  const cli_test::Run all = run("eval --model '" + ckpt + "' --split all", "OPENBLAS_NUM_THREADS=1");
  BOOST_TEST(all.status == 0, all.err);
  BOOST_TEST(has(all.out, "moons, all (1000 samples): loss "), all.out);
  BOOST_TEST(!has(all.out, "nan"), all.out);
}

// Issue 34, case 14. Before: "loss -nan", exit 0; sample refuses such a file.
BOOST_AUTO_TEST_CASE(a_model_whose_finite_weights_overflow_in_the_forward_is_refused) {
  const std::string ckpt = trained("moons");
  // Every weight 1e200 times its own: finite, but 1e400 in the logits (inf, and inf - inf in the loss).
  expect_refused("eval --model '" + forged(ckpt, "seed", "seed=0", 1e200) + "'",
                 "its outputs are not finite (NaN or inf), its weights overflow double precision");
  expect_refused("eval --model '" + forged(ckpt, "seed", "seed=0", 1e200) + "' --split all", "its weights overflow");
}

// Issue 34, case 15. Before: the description's dataset name reached the
// terminal raw in the error line: ESC sequences set the title and cleared the screen.
BOOST_AUTO_TEST_CASE(text_from_a_forged_description_reaches_the_terminal_escaped) {
  const std::string ckpt = trained("moons");
  const std::string evil = "dataset=x\x1b]0;owned\x07\x1b[2J\xc2\x9b" "31m\xff.csv";
  const cli_test::Run r = run("eval --model '" + forged(ckpt, "dataset", evil) + "'", "OPENBLAS_NUM_THREADS=1");
  BOOST_TEST(r.status == 2, r.err);
  BOOST_TEST(has(r.err, "x\\x1b]0;owned\\x07\\x1b[2J\\xc2\\x9b31m\\xff.csv"), r.err);
  for (const char bad : {'\x1b', '\x07', '\x9b', '\xff'}) BOOST_TEST(!has(r.err, std::string(1, bad)), r.err);
  BOOST_TEST((!r.err.empty() && r.err.find('\n') == r.err.size() - 1), r.err);
}
