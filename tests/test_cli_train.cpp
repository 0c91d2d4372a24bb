// autograd train / compare / eval, run as a program: bad input exits 2 with
// one line on stderr and writes nothing; good input writes the three outputs.
#define BOOST_TEST_MODULE cli_train
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "autograd/parameter.h"
#include "tests/cli_run.h"
#include "train/checkpoint.h"

namespace fs = std::filesystem;

namespace {

using Result = cli_test::Run;
using cli_test::run;
using cli_test::slurp;
using cli_test::has;

const fs::path& scratch() {
  static const fs::path dir = fs::temp_directory_path() / ("ag-cli-train-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

int lines(const std::string& text) {
  int n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

std::string dir(const std::string& name) { return (scratch() / name).string(); }

// Exit 2, exactly one line on stderr containing `expect`, and no output directory.
void expect_usage_error(const std::string& args, const std::string& expect, const std::string& out_dir) {
  const Result r = run(args);
  BOOST_TEST(r.status == 2, args);
  BOOST_TEST(lines(r.err) == 1, args << " -> " << r.err);
  BOOST_TEST(r.err.find(expect) != std::string::npos, args << " -> " << r.err);
  BOOST_TEST(!fs::exists(out_dir), args << " created " << out_dir);
}

struct Cleanup {
  ~Cleanup() { fs::remove_all(scratch()); }
};

}  // namespace

BOOST_GLOBAL_FIXTURE(Cleanup);

BOOST_AUTO_TEST_CASE(bad_options_exit_2_with_one_line_and_write_nothing) {
  const std::string out = dir("never");
  expect_usage_error("train --dataset mnist --out " + out, "unknown dataset 'mnist'", out);
  expect_usage_error("train --dataset nowhere.csv --out " + out, "nowhere.csv", out);
  expect_usage_error("train --lr abc --out " + out, "--lr", out);
  expect_usage_error("train --lr -1 --out " + out, "--lr must be a positive number", out);
  expect_usage_error("train --epochs 0 --out " + out, "--epochs must be from 1 to 1000000", out);
  expect_usage_error("train --epochs -3 --out " + out, "--epochs", out);
  expect_usage_error("train --hidden 64,x --out " + out, "--hidden '64,x'", out);
  expect_usage_error("train --hidden 64,,8 --out " + out, "--hidden", out);
  expect_usage_error("train --batch-size 0 --out " + out, "--batch-size", out);
  expect_usage_error("train --norm groupnorm --out " + out, "unknown norm", out);
  expect_usage_error("train --bogus 1 --out " + out, "bogus", out);
  // RunConfig::validate, its fields spelled as the options: one line, once.
  expect_usage_error("train --threads 300 --out " + out, "--threads must be from 1 to 256 (0: the machine's cores), got 300", out);
  expect_usage_error("train --weight-decay 2000 --out " + out, "--weight-decay 2000 with --lr 0.001: the weights shrink", out);
  expect_usage_error("train --validation 1 --out " + out, "--validation must be in [0, 1), got 1", out);
  expect_usage_error("train --model gpt --optimizer sgd --out " + out, "--optimizer 'sgd' is not one of adam, adamw (--model gpt)", out);
  expect_usage_error("train --model gpt --schedule step --out " + out, "--schedule 'step' is not one of cosine, constant (--model gpt)", out);
  expect_usage_error("train --model gpt --dropout 1 --out " + out, "--dropout must be in [0, 1), got 1", out);
  expect_usage_error("train --model gpt --norm none --out " + out, "--norm none: a GPT's norm is layernorm or rmsnorm (for no norm: --norm-placement none)", out);
  expect_usage_error("train --optimizer rmsprop --out " + out, "--optimizer 'rmsprop' is not one of sgd, adam, adamw", out);
  expect_usage_error("compare --norm none,layernorm --impl composed,fused --out " + out, "exactly one", out);
  expect_usage_error("eval --model " + dir("missing.ckpt"), "cannot open", out);
}

BOOST_AUTO_TEST_CASE(an_unwritable_out_exits_2) {
  std::ofstream(scratch() / "a-file") << "x";
  const std::string out = dir("a-file") + "/run";
  expect_usage_error("train --dataset moons --epochs 1 --out " + out, "--out", out);
}

BOOST_AUTO_TEST_CASE(csv_errors_name_the_row_and_column) {
  std::ofstream(scratch() / "bad.csv") << "a,b,label\n1,2,0\n3,oops,1\n";
  std::ofstream(scratch() / "good.csv") << "a,b,label\n1,2,0\n3,4,1\n5,6,0\n7,8,1\n";
  const std::string out = dir("csv-run");
  expect_usage_error("train --dataset " + dir("bad.csv") + " --out " + out, "row 3, column 2", out);
  expect_usage_error("train --dataset " + dir("good.csv") + " --label target --out " + out, "no label column 'target'", out);
}

// A BatchNorm MLP's checkpoint holds its running statistics after the weights,
// so eval normalises as training's validation did and repeats its last loss.
// Before, the checkpoint held the weights only and eval refused the model.
BOOST_AUTO_TEST_CASE(a_batchnorm_checkpoint_holds_its_running_statistics_and_eval_repeats_the_loss) {
  const std::string out = dir("moons-batchnorm");
  const Result r = run("train --dataset moons --hidden 16 --norm batchnorm --epochs 3 --lr 0.01 --out " + out);
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  const ag::Checkpoint ckpt = ag::read_checkpoint(out + "/model.ckpt");
  std::vector<std::string> names;
  for (const ag::CheckpointEntry& e : ckpt.params) names.push_back(e.name);
  BOOST_TEST((std::find(names.begin(), names.end(), "norm1.running_mean") != names.end()), r.out);
  BOOST_TEST((std::find(names.begin(), names.end(), "norm1.running_var") != names.end()), r.out);
  const Result e = run("eval --model " + out + "/model.ckpt");
  BOOST_TEST_REQUIRE(e.status == 0, e.err);
  const std::string csv = slurp(out + "/metrics.csv");
  const std::string last = csv.substr(csv.rfind('\n', csv.size() - 2) + 1);
  const double val_loss = std::stod(last.substr(last.find(',', last.find(',') + 1) + 1));
  char expected[32];
  std::snprintf(expected, sizeof expected, "loss %.4f", val_loss);
  BOOST_TEST(e.out.find(expected) != std::string::npos, e.out << " vs " << expected);
  // The same weights without the statistics (a checkpoint from before they were saved): refused, saying why.
  std::vector<ag::Parameter> weights;
  for (const ag::CheckpointEntry& entry : ckpt.params) {
    if (entry.name.find(".running_") == std::string::npos) weights.emplace_back(entry.name, entry.value);
  }
  std::vector<const ag::Parameter*> view;
  for (const ag::Parameter& p : weights) view.push_back(&p);
  std::ofstream(out + "/old.ckpt", std::ios::binary) << ag::encode_checkpoint(view, ckpt.metadata);
  const Result old = run("eval --model " + out + "/old.ckpt");
  BOOST_TEST(old.status == 2, old.err);
  BOOST_TEST(old.err.find("saved without the running statistics") != std::string::npos, old.err);
}

// The MLP's norm after each activation (--norm-placement post): another network
// from the same weights, said in the title and the checkpoint, rebuilt by eval.
BOOST_AUTO_TEST_CASE(an_mlp_norm_goes_before_or_after_its_activation_and_eval_rebuilds_it) {
  const std::string pre = dir("moons-pre"), post = dir("moons-post");
  const std::string common = "train --dataset moons --hidden 16,16 --norm layernorm --epochs 2 --lr 0.01 --out ";
  const Result a = run(common + pre);
  const Result b = run(common + post + " --norm-placement post");
  BOOST_TEST_REQUIRE(a.status == 0, a.err);
  BOOST_TEST_REQUIRE(b.status == 0, b.err);
  BOOST_TEST(a.out.find("Linear(2 -> 16) ReLU LayerNorm(16, composed) Linear") == std::string::npos, a.out);
  BOOST_TEST(a.out.find("Linear(2 -> 16) LayerNorm(16, composed) ReLU Linear") != std::string::npos, a.out);
  BOOST_TEST(b.out.find("Linear(2 -> 16) ReLU LayerNorm(16, composed) Linear") != std::string::npos, b.out);
  BOOST_TEST(slurp(pre + "/metrics.csv") != slurp(post + "/metrics.csv"));  // another network, another loss
  BOOST_TEST(ag::read_checkpoint(post + "/model.ckpt").metadata.find("placement=post") != std::string::npos);
  BOOST_TEST(ag::read_checkpoint(pre + "/model.ckpt").metadata.find("placement=") == std::string::npos);
  for (const std::string& out : {pre, post}) {
    const Result e = run("eval --model " + out + "/model.ckpt");
    BOOST_TEST_REQUIRE(e.status == 0, e.err);
    const std::string csv = slurp(out + "/metrics.csv");
    const std::string last = csv.substr(csv.rfind('\n', csv.size() - 2) + 1);
    char expected[32];
    std::snprintf(expected, sizeof expected, "loss %.4f", std::stod(last.substr(last.find(',', last.find(',') + 1) + 1)));
    BOOST_TEST(e.out.find(expected) != std::string::npos, out << ": " << e.out << " vs " << expected);
  }
  const Result none = run("train --dataset moons --norm layernorm --norm-placement none --epochs 1 --out " + dir("moons-none"));
  BOOST_TEST(none.status == 2, none.err);
  BOOST_TEST(none.err.find("an MLP's norm goes pre (before each activation) or post") != std::string::npos, none.err);
}

BOOST_AUTO_TEST_CASE(train_writes_metrics_plot_and_checkpoint_and_eval_reads_it) {
  const std::string out = dir("moons");
  const Result r = run("train --dataset moons --hidden 16 --epochs 3 --lr 0.01 --out " + out);
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  BOOST_TEST(r.out.find("epoch 3/3") != std::string::npos, r.out);
  BOOST_TEST(r.out.find('\r') == std::string::npos);  // not a terminal: plain lines, no progress bar
  const std::string csv = slurp(out + "/metrics.csv");
  BOOST_TEST(lines(csv) == 5);  // the header, epoch 0 (before any step), epochs 1-3
  BOOST_TEST(r.out.find("epoch 0/3") != std::string::npos, r.out);  // the log starts before any step
  BOOST_TEST(csv.rfind("epoch,train_loss,val_loss,train_accuracy,val_accuracy,seconds\n", 0) == 0);
  BOOST_TEST(slurp(out + "/model.ckpt").rfind("AGRADCKP", 0) == 0);
  if (r.out.find("wrote " + out + "/curves.png") != std::string::npos) {
    BOOST_TEST(slurp(out + "/curves.png").rfind("\x89PNG\r\n\x1a\n", 0) == 0);
  }
  // eval of the validation split repeats the last epoch's validation loss.
  const Result e = run("eval --model " + out + "/model.ckpt");
  BOOST_TEST_REQUIRE(e.status == 0, e.err);
  std::istringstream rows(csv);
  std::string row, last;
  while (std::getline(rows, row)) last = row;
  const double val_loss = std::stod(last.substr(last.find(',', last.find(',') + 1) + 1));
  char expected[32];
  std::snprintf(expected, sizeof expected, "loss %.4f", val_loss);
  BOOST_TEST(e.out.find(expected) != std::string::npos, e.out << " vs " << expected);
  BOOST_TEST(e.out.find("moons, val (200 samples)") != std::string::npos, e.out);
  // A model that does not fit the data: exit 2.
  const Result mismatch = run("eval --model " + out + "/model.ckpt --dataset digits");
  BOOST_TEST(mismatch.status == 2);
  BOOST_TEST(lines(mismatch.err) == 1, mismatch.err);
  // A damaged checkpoint: exit 2, one line naming the file.
  std::ofstream(out + "/broken.ckpt", std::ios::binary) << slurp(out + "/model.ckpt").substr(0, 100);
  const Result broken = run("eval --model " + out + "/broken.ckpt");
  BOOST_TEST(broken.status == 2);
  BOOST_TEST(lines(broken.err) == 1, broken.err);
  BOOST_TEST(broken.err.find("broken.ckpt: truncated") != std::string::npos, broken.err);
}

BOOST_AUTO_TEST_CASE(without_gnuplot_the_csv_is_still_written) {
  const std::string out = dir("no-gnuplot");
  const Result r = run("train --dataset xor --hidden 8 --epochs 1 --out " + out, "PATH=/nonexistent");
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  BOOST_TEST(fs::exists(out + "/metrics.csv"));
  BOOST_TEST(!fs::exists(out + "/curves.png"));
  BOOST_TEST(r.out.find("gnuplot-nox") != std::string::npos, r.out);
}

BOOST_AUTO_TEST_CASE(a_diverging_run_exits_1_naming_epoch_and_step) {
  const Result r = run("train --dataset sine --optimizer sgd --lr 1e6 --epochs 3 --out " + dir("diverge"));
  BOOST_TEST(r.status == 1);
  BOOST_TEST(lines(r.err) == 1, r.err);
  BOOST_TEST(r.err.find("at epoch 1, step") != std::string::npos, r.err);
}

BOOST_AUTO_TEST_CASE(compare_composed_and_fused_prints_the_largest_difference) {
  const Result r = run("compare --dataset moons --hidden 16 --norm layernorm --impl composed,fused --epochs 2 --out " +
                       dir("compare"));
  BOOST_TEST_REQUIRE(r.status == 0, r.err << r.out);
  BOOST_TEST(r.out.find("largest difference composed vs fused: train loss") != std::string::npos, r.out);
  BOOST_TEST(slurp(dir("compare") + "/metrics.csv").rfind("run,epoch,", 0) == 0);
}

BOOST_AUTO_TEST_SUITE(run_folders)

// The names in a folder, hidden ones included, sorted.
std::string listing(const fs::path& d) {
  std::set<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(d)) names.insert(e.path().filename().string());
  std::string s;
  for (const std::string& n : names) s += n + " ";
  return s;
}

const char* kQuickRun = "train --dataset moons --epochs 2 --hidden 8 --out ";

// Before: each output replaced the last run's as soon as it was ready, so a
// run killed between them left new metrics beside an old model and plot.
BOOST_AUTO_TEST_CASE(a_killed_run_leaves_the_last_run_whole_and_the_next_run_cleans_up) {
  const std::string out = dir("killed");
  BOOST_TEST_REQUIRE(run(kQuickRun + out, "OPENBLAS_NUM_THREADS=1").status == 0);
  const std::string metrics = slurp(fs::path(out) / "metrics.csv"), ckpt = slurp(fs::path(out) / "model.ckpt");
  // A long run, killed with SIGKILL while it trains (once its staging folder exists).
  const std::string cmd = std::string("OPENBLAS_NUM_THREADS=1 '") + AUTOGRAD_CLI +
                          "' train --dataset digits --epochs 100000 --hidden 32 --out '" + out +
                          "' >/dev/null 2>&1 & pid=$!; for i in $(seq 600); do ls -a '" + out +
                          "' | grep -q autograd-run- && break; sleep 0.05; done; sleep 0.2; kill -9 $pid; "
                          "wait $pid 2>/dev/null; true";
  BOOST_TEST_REQUIRE(std::system(cmd.c_str()) == 0);
  BOOST_TEST(slurp(fs::path(out) / "metrics.csv") == metrics);
  BOOST_TEST(slurp(fs::path(out) / "model.ckpt") == ckpt);
  BOOST_TEST(has(listing(out), ".autograd-run-"), listing(out));  // the killed run's staging folder
  // A staging folder a run killed mid-commit would leave: its COMMIT mark says
  // the run was complete, so the next run finishes moving it in first.
  BOOST_TEST_REQUIRE(run(kQuickRun + out, "OPENBLAS_NUM_THREADS=1").status == 0);
  BOOST_TEST(listing(out) == ".autograd.lock curves.png metrics.csv model.ckpt ", listing(out));
}

// Before: metrics.csv was replaced, then writing model.ckpt failed: a mixed folder.
BOOST_AUTO_TEST_CASE(a_run_that_fails_to_write_one_output_replaces_none) {
  const std::string out = dir("failing");
  BOOST_TEST_REQUIRE(run(kQuickRun + out, "OPENBLAS_NUM_THREADS=1").status == 0);
  const std::string metrics = slurp(fs::path(out) / "metrics.csv");
  fs::remove(fs::path(out) / "model.ckpt");
  fs::create_directory(fs::path(out) / "model.ckpt");  // in the way of the new checkpoint
  const Result r = run("train --dataset moons --epochs 3 --hidden 8 --out " + out, "OPENBLAS_NUM_THREADS=1");
  BOOST_TEST(r.status == 2, r.err);
  BOOST_TEST(has(r.err, "model.ckpt there is a directory"), r.err);
  BOOST_TEST(slurp(fs::path(out) / "metrics.csv") == metrics);  // still the 2-epoch run's
  BOOST_TEST(listing(out) == ".autograd.lock curves.png metrics.csv model.ckpt ", listing(out));
}

// A file-size limit (ulimit -f) makes the checkpoint fail: the message names
// the output, not the staging folder, and the folder the run created is gone.
BOOST_AUTO_TEST_CASE(a_run_stopped_by_a_file_size_limit_leaves_nothing) {
  const std::string out = dir("limited");
  const Result r = run("train --dataset moons --epochs 2 --hidden 8 --out " + out, "ulimit -f 1; OPENBLAS_NUM_THREADS=1");
  BOOST_TEST(r.status == 2, r.err);
  BOOST_TEST(r.err == "autograd train: " + out + "/model.ckpt: cannot write (File too large)\n", r.err);
  BOOST_TEST(!fs::exists(out));
}

BOOST_AUTO_TEST_CASE(a_second_run_into_a_busy_folder_is_refused) {
  const std::string out = dir("busy");
  BOOST_TEST_REQUIRE(run(kQuickRun + out, "OPENBLAS_NUM_THREADS=1").status == 0);
  const std::string metrics = slurp(fs::path(out) / "metrics.csv");
  // flock(1) holds the folder's lock while it runs the second train, as a first run would.
  const Result r = run(kQuickRun + out, "OPENBLAS_NUM_THREADS=1 flock '" + out + "/.autograd.lock'");
  BOOST_TEST(r.status == 2, r.err);
  BOOST_TEST(has(r.err, "another autograd run is writing there"), r.err);
  BOOST_TEST(slurp(fs::path(out) / "metrics.csv") == metrics);
}

// The journal line a run writes for a staging folder it made (cli/run_folder.cpp).
std::string journal_line(const fs::path& folder) {
  struct stat st {};
  BOOST_TEST_REQUIRE(::lstat(folder.c_str(), &st) == 0);
  return "staging " + folder.filename().string() + " " + std::to_string(st.st_dev) + " " + std::to_string(st.st_ino) + "\n";
}

BOOST_AUTO_TEST_CASE(a_staging_folder_marked_complete_is_finished_by_the_next_run) {
  const std::string out = dir("rollforward");
  BOOST_TEST_REQUIRE(run(kQuickRun + out, "OPENBLAS_NUM_THREADS=1").status == 0);
  // What a run killed between its renames leaves: the COMMIT mark naming its
  // outputs, the one it had not moved yet (metrics.csv), and none for the one
  // it did not produce (model.ckpt), with the folder listed in the journal.
  const fs::path staging = fs::path(out) / ".autograd-run-KILLED";
  fs::create_directory(staging);
  std::ofstream(staging / "COMMIT") << "metrics.csv\nmodel.ckpt\n";
  std::ofstream(staging / "metrics.csv") << "from the killed run\n";
  std::ofstream(staging / ".metrics.csv.tmp.ABC123") << "a temporary a killed save left";
  std::ofstream(fs::path(out) / ".autograd.lock") << "autograd run folder journal 1\n" << journal_line(staging);
  // compare writes metrics.csv and curves.png only: model.ckpt can be gone only
  // because the next run finished the killed run's commit first.
  BOOST_TEST_REQUIRE(run("compare --dataset moons --epochs 2 --hidden 8 --out " + out, "OPENBLAS_NUM_THREADS=1").status == 0);
  BOOST_TEST(listing(out) == ".autograd.lock curves.png metrics.csv ", listing(out));
  BOOST_TEST(!has(slurp(fs::path(out) / "metrics.csv"), "killed"));
}

// Every file and folder under `d` (hidden ones included) with its bytes; folders as "/".
std::map<std::string, std::string> contents(const fs::path& d) {
  std::map<std::string, std::string> all;
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(d)) {
    all[fs::relative(e.path(), d).string()] = e.is_directory() ? "/" : slurp(e.path());
  }
  return all;
}

// A user's folder holding files and folders named like every temporary this or
// an older version made, a staging folder with a COMMIT mark among them.
void plant_look_alikes(const fs::path& d) {
  fs::create_directories(d / ".autograd-plot-Xy12Zw");
  std::ofstream(d / ".autograd-plot-Xy12Zw" / "notes.txt") << "mine\n";
  fs::create_directories(d / ".autograd-run-ABCdef");
  std::ofstream(d / ".autograd-run-ABCdef" / "COMMIT") << "metrics.csv\nmodel.ckpt\n";
  std::ofstream(d / ".autograd-run-ABCdef" / "metrics.csv") << "my own table\n";
  fs::create_directories(d / ".thesis.tex.tmp.Ab12Cd");
  std::ofstream(d / ".thesis.tex.tmp.Ab12Cd" / "chapter1.tex") << "\\chapter{One}\n";
  std::ofstream(d / ".report.pdf.tmp.QWErty") << "a file of mine";
  std::ofstream(d / "metrics.csv.tmp-1234.png") << "a picture of mine";
  std::ofstream(d / ".autograd-write-test") << "mine too";
  std::ofstream(d / "keep.txt") << "plain";
}

// Before: the run deleted every one of these (recursively) before it trained.
BOOST_AUTO_TEST_CASE(a_users_look_alike_files_and_folders_survive_a_run_byte_for_byte) {
  for (const char* lock : {"none", "empty", "foreign journal"}) {
    const fs::path out = dir(std::string("look-alikes-") + (lock[0] == 'n' ? "a" : lock[0] == 'e' ? "b" : "c"));
    plant_look_alikes(out);
    if (std::string(lock) == "empty") std::ofstream(out / ".autograd.lock");  // what an older version left
    if (std::string(lock) == "foreign journal") {
      // Listed, but not the folder the run made (another inode): still the user's.
      std::ofstream(out / ".autograd.lock") << "autograd run folder journal 1\nstaging .autograd-run-ABCdef 1 1\n"
                                             << "staging .autograd-plot-Xy12Zw 1 1\n";
    }
    const std::map<std::string, std::string> before = contents(out);
    const Result r = run(kQuickRun + out.string(), "OPENBLAS_NUM_THREADS=1");
    BOOST_TEST_REQUIRE(r.status == 0, lock << ": " << r.err);
    std::map<std::string, std::string> after = contents(out);
    for (const char* output : {".autograd.lock", "metrics.csv", "model.ckpt", "curves.png"}) after.erase(output);
    std::map<std::string, std::string> expected = before;
    expected.erase(".autograd.lock");
    BOOST_TEST((after == expected), lock << ": now " << listing(out));
  }
}

// Before: a lock file holding a user's text was silently taken over.
BOOST_AUTO_TEST_CASE(a_lock_file_holding_other_text_is_refused_and_kept) {
  const fs::path out = dir("foreign-lock");
  fs::create_directories(out);
  std::ofstream(out / ".autograd.lock") << "my shopping list\n";
  const Result r = run(kQuickRun + out.string(), "OPENBLAS_NUM_THREADS=1");
  BOOST_TEST(r.status == 2, r.err);
  BOOST_TEST(has(r.err, ".autograd.lock there is not an autograd lock"), r.err);
  BOOST_TEST(slurp(out / ".autograd.lock") == "my shopping list\n");
  BOOST_TEST(listing(out) == ".autograd.lock ", listing(out));
}

BOOST_AUTO_TEST_SUITE_END()
