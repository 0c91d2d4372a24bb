// autograd train --model gpt, sample and compare, run as a program on a small
// FILE.txt for a few steps: the files, the baseline line, sample's output, and
// eval of the checkpoint against the bigram.
#define BOOST_TEST_MODULE cli_gpt
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/cli_run.h"

namespace fs = std::filesystem;

namespace {

using cli_test::has;
using cli_test::run;
using cli_test::slurp;

const fs::path& scratch() {
  static const fs::path dir = fs::temp_directory_path() / ("ag-cli-gpt-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

std::string path(const std::string& name) { return (scratch() / name).string(); }

// Forty made-up names over seven letters, the last without a newline.
std::string names_file() {
  const std::string p = path("names.txt");
  std::ofstream out(p);
  const char* parts[] = {"ab", "ce", "fa", "de", "bo", "ca", "ed", "fo"};
  for (int i = 0; i < 40; ++i) out << parts[i % 8] << parts[(i * 3 + 1) % 8] << (i % 3 ? "a" : "") << (i + 1 < 40 ? "\n" : "");
  return p;
}

const std::string kTiny = " --layers 1 --heads 2 --width 8 --context 8 --epochs 2 --batch-size 8 --warmup 2";
const std::string kEnv = "OPENBLAS_NUM_THREADS=1";

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

double number_after(const std::string& text, const std::string& key) {
  const std::size_t at = text.find(key);
  return at == std::string::npos ? std::nan("") : std::stod(text.substr(at + key.size()));
}

struct Cleanup {
  ~Cleanup() { fs::remove_all(scratch()); }
};

}  // namespace

BOOST_GLOBAL_FIXTURE(Cleanup);

BOOST_AUTO_TEST_CASE(train_gpt_writes_the_files_and_prints_the_baseline_then_sample_prints_words) {
  const std::string out = path("run");
  const cli_test::Run r = run("train --model gpt --dataset " + names_file() + kTiny + " --out " + out, kEnv);
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  BOOST_TEST(r.err.empty(), r.err);
  BOOST_TEST(has(r.out, "data: " + names_file() + ", 40 lines (36 train / 4 validation), 7 characters + the boundary token"), r.out);
  const double bigram = number_after(r.out, "bigram baseline: val loss ");
  BOOST_TEST((bigram > 0.5 && bigram < std::log(7.0) + 1), r.out);
  BOOST_TEST(has(r.out, "step 10/10  epoch 2.00  train loss"), r.out);  // 5 steps an epoch, 4 evaluations each
  BOOST_TEST(has(r.out, "x the bigram baseline"), r.out);
  for (const char* f : {"metrics.csv", "model.ckpt", "curves.png"}) BOOST_TEST(fs::exists(out + "/" + f), f);
  const std::vector<std::string> csv = lines_of(slurp(out + "/metrics.csv"));
  BOOST_TEST_REQUIRE(csv.size() == 1 + 1 + 2 * 4u);  // the header, step 0, 4 evaluations an epoch
  BOOST_TEST(csv[0] == "step,epoch,train_loss,val_loss,seconds");
  BOOST_TEST(csv[1].rfind("0,0,", 0) == 0u, csv[1]);
  BOOST_TEST(csv[9].rfind("10,2,", 0) == 0u, csv[9]);
  BOOST_TEST(slurp(out + "/curves.png").rfind("\x89PNG", 0) == 0u);

  const std::string sample = "sample --model " + out + "/model.ckpt --count 7 --seed 3 --max-length 12";
  const cli_test::Run s1 = run(sample, kEnv), s2 = run(sample, kEnv);
  BOOST_TEST_REQUIRE(s1.status == 0, s1.err);
  const std::vector<std::string> words = lines_of(s1.out);
  BOOST_TEST(words.size() == 7u);
  for (const std::string& w : words) {
    BOOST_TEST(w.size() <= 12u);
    BOOST_TEST(w.find_first_not_of("abcdefo") == std::string::npos, w);
  }
  BOOST_TEST(s1.out == s2.out);  // seeded: reproducible
  const cli_test::Run other = run("sample --model " + out + "/model.ckpt --count 7 --seed 4 --max-length 12", kEnv);
  BOOST_TEST(other.out != s1.out);
  const cli_test::Run cold = run("sample --model " + out + "/model.ckpt --count 7 --seed 3 --max-length 12 --temperature 0.01", kEnv);
  BOOST_TEST_REQUIRE(cold.status == 0);
  BOOST_TEST(lines_of(cold.out).size() == 7u);
}

BOOST_AUTO_TEST_CASE(sample_refuses_an_mlp_checkpoint_and_bad_numbers) {
  const std::string out = path("mlp");
  BOOST_TEST_REQUIRE(run("train --dataset xor --hidden 4 --epochs 1 --out " + out, kEnv).status == 0);
  const cli_test::Run r = run("sample --model " + out + "/model.ckpt");
  BOOST_TEST(r.status == 2);
  BOOST_TEST(has(r.err, "not a GPT checkpoint"), r.err);
  BOOST_TEST(run("sample --model " + out + "/model.ckpt --temperature 0").status == 2);
  BOOST_TEST(run("sample --model " + out + "/model.ckpt --count 0").status == 2);
}

BOOST_AUTO_TEST_CASE(compare_gpt_composed_and_fused_agree_and_placements_overlay) {
  const std::string file = names_file();
  const cli_test::Run impl = run("compare --model gpt --dataset " + file + kTiny + " --out " + path("cmp-impl"), kEnv);
  BOOST_TEST_REQUIRE(impl.status == 0, impl.out + impl.err);
  BOOST_TEST(has(impl.out, "bigram baseline: val loss"), impl.out);
  BOOST_TEST(has(impl.out, "largest difference composed vs fused: train loss"), impl.out);
  const double gap = number_after(impl.out, "largest difference composed vs fused: train loss ");
  BOOST_TEST(gap <= 1e-9, impl.out);
  const cli_test::Run place =
      run("compare --model gpt --norm-placement pre,post,none --dataset " + file + kTiny + " --out " + path("cmp-place"), kEnv);
  BOOST_TEST_REQUIRE(place.status == 0, place.out + place.err);
  for (const char* label : {"pre: step 10/10", "post: step 10/10", "none: step 10/10"}) BOOST_TEST(has(place.out, label), place.out);
  const std::vector<std::string> csv = lines_of(slurp(path("cmp-place") + "/metrics.csv"));
  BOOST_TEST(csv.size() == 1 + 3 * 9u);
  BOOST_TEST(csv[0] == "run,step,epoch,train_loss,val_loss,seconds");
  BOOST_TEST(fs::exists(path("cmp-place") + "/curves.png"));
}

BOOST_AUTO_TEST_CASE(options_of_the_other_model_and_bad_text_are_one_line_errors) {
  std::ofstream(path("empty.txt")).close();
  std::ofstream(path("binary.txt"), std::ios::binary) << std::string("abc\0\x01\x02", 6);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"train --model gpt --hidden 64", "--hidden does not apply to --model gpt"},
      {"train --model gpt --activation relu", "--activation does not apply to --model gpt"},
      {"train --heads 2", "--heads does not apply to --model mlp"},
      {"train --norm layernorm --norm-placement none", "none: an MLP's norm goes pre (before each activation) or post"},
      {"train --dataset words", "is text, one sequence per line: train a GPT on it with --model gpt"},
      {"train --model gpt --dataset digits", "--model gpt trains on text"},
      {"train --model gpt --dataset " + path("empty.txt"), "the file is empty"},
      {"train --model gpt --dataset " + path("binary.txt"), "is not UTF-8 text"},
      {"train --model gpt --dataset " + path("missing.txt"), "cannot open"},
      {"train --model gpt --width 10 --heads 4", "--width 10 must be a multiple of --heads 4"},
      {"train --model gpt --norm-placement middle", "unknown norm placement 'middle'"},
      {"train --model gpt --validation 0", "--validation must be above 0"},
      {"compare --model gpt --norm-placement pre,post --impl composed,fused", "exactly one of --norm-placement"},
      {"sample", "--model"},
      {"sample --model " + path("missing.ckpt"), "cannot open"},
  };
  for (const auto& [args, expect] : cases) {
    if (args.rfind("sample", 0) == 0) continue;  // sample has no --out: checked below
    const cli_test::Run r = run(args + " --out " + path("never"));
    BOOST_TEST(r.status == 2, args);
    BOOST_TEST(lines_of(r.err).size() == 1u, args << " -> " << r.err);
    BOOST_TEST(has(r.err, expect), args << " -> " << r.err);
    BOOST_TEST(r.out.empty(), args << " -> " << r.out);
    BOOST_TEST(!fs::exists(path("never")), args);
  }
  for (const auto& [args, expect] : cases) {
    if (args.rfind("sample", 0) != 0) continue;
    const cli_test::Run r = run(args);
    BOOST_TEST(r.status == 2, args);
    BOOST_TEST(has(r.err, expect), args << " -> " << r.err);
  }
}

// Before: eval read MLP checkpoints only ("the checkpoint does not describe an autograd MLP").
// Now a GPT checkpoint is scored per character on its own split, with the bigram beside it:
// on the training split and seed, the same numbers train printed last.
BOOST_AUTO_TEST_CASE(eval_scores_a_gpt_checkpoint_per_character_against_the_bigram) {
  const std::string out = path("eval-run");
  const cli_test::Run t = run("train --model gpt --dataset " + names_file() + kTiny + " --out " + out, kEnv);
  BOOST_TEST_REQUIRE(t.status == 0, t.err);
  const cli_test::Run e = run("eval --model " + out + "/model.ckpt", kEnv);
  BOOST_TEST_REQUIRE(e.status == 0, e.err);
  BOOST_TEST(e.err.empty(), e.err);
  BOOST_TEST(has(e.out, names_file() + ", val (4 lines, "), e.out);
  char trained[64];
  std::snprintf(trained, sizeof trained, "loss %.4f nats per character",
                number_after(t.out.substr(t.out.rfind("step 10/10")), "val loss "));
  BOOST_TEST(has(e.out, trained), e.out << " vs " << t.out);
  char bigram[64];
  std::snprintf(bigram, sizeof bigram, "the bigram baseline %.4f", number_after(t.out, "bigram baseline: val loss "));
  BOOST_TEST(has(e.out, bigram), e.out << " vs " << t.out);
  const cli_test::Run all = run("eval --model " + out + "/model.ckpt --split all", kEnv);
  BOOST_TEST_REQUIRE(all.status == 0, all.err);
  BOOST_TEST(has(all.out, ", all (40 lines, "), all.out);
  BOOST_TEST(all.out != e.out);
}

BOOST_AUTO_TEST_CASE(eval_refuses_text_outside_the_vocabulary_and_a_table_for_a_gpt) {
  const std::string out = path("eval-refuse");
  BOOST_TEST_REQUIRE(run("train --model gpt --dataset " + names_file() + kTiny + " --out " + out, kEnv).status == 0);
  std::ofstream(path("other.txt")) << "abc\nfez\ncab\n";  // 'z' and nothing else is new
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--dataset " + path("other.txt"), "the character 'z' is not in the model's vocabulary (7 characters: abcdefo)"},
      {"--dataset digits", "--dataset digits is not text: the model in"},
      {"--label 2", "--label does not apply to a GPT checkpoint"},
  };
  for (const auto& [args, expect] : cases) {
    const cli_test::Run r = run("eval --model " + out + "/model.ckpt " + args, kEnv);
    BOOST_TEST(r.status == 2, args);
    BOOST_TEST(lines_of(r.err).size() == 1u, args << " -> " << r.err);
    BOOST_TEST(has(r.err, expect), args << " -> " << r.err);
    BOOST_TEST(r.out.empty(), args << " -> " << r.out);
  }
}
