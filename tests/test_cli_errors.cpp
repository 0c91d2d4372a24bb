#define BOOST_TEST_MODULE cli_errors
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "tests/cli_run.h"

// Every subcommand, misused every way a student might: the built program must
// print exactly one line on stderr, exit with status 2, and write nothing.
namespace fs = std::filesystem;
namespace bdata = boost::unit_test::data;

namespace {

using Result = cli_test::Run;
using cli_test::quote;
using cli_test::slurp;

// A scratch folder per test process: `work` is the program's current folder and must stay empty.
const fs::path& scratch() {
  static const fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("autograd_cli_errors_" + std::to_string(::getpid()));
    fs::remove_all(d);
    fs::create_directories(d / "work");
    std::ofstream(d / "bad.csv") << "a,b,label\n1,x,0\n2,3,1\n";
    std::ofstream(d / "garbage.ckpt") << "this is not a checkpoint\n";
    std::ofstream(d / "huge_label.csv") << "x,label\n1,0\n2,999999\n";
    std::ofstream(d / "e5_label.csv") << "x,label\n1,0\n2,1e5\n";
    return d;
  }();
  return dir;
}

// Removes the scratch folder when the test program ends.
struct RemoveScratch {
  ~RemoveScratch() { fs::remove_all(scratch()); }
};

Result run_cli(const std::vector<std::string>& args) {
  std::string words;
  for (const std::string& a : args) words += " " + quote(a);
  return cli_test::run(words, "", scratch() / "work");
}

// Files in the program's current folder after a run (it should have made none).
std::vector<std::string> leftovers() {
  std::vector<std::string> names;
  for (const auto& e : fs::recursive_directory_iterator(scratch() / "work")) names.push_back(e.path().string());
  fs::remove_all(scratch() / "work");
  fs::create_directories(scratch() / "work");
  return names;
}

// A path that does not exist, inside the scratch folder (checked to stay absent).
const std::string& missing_file() {
  static const std::string path = (scratch() / "missing" / "input.csv").string();
  return path;
}
const std::string kUnwritable = "/dev/null/autograd-out";  // under a device: not even root can create it

struct Misuse {
  std::string command;
  std::vector<std::string> args;
};

std::ostream& operator<<(std::ostream& os, const Misuse& m) {
  os << "autograd " << m.command;
  for (const std::string& a : m.args) os << " " << a;
  return os;
}

// The misuses every subcommand shares, then each one's own.
std::vector<Misuse> misuses() {
  std::vector<Misuse> list;
  const std::vector<std::string> commands = {"demo", "gradcheck", "fuzz", "train", "compare", "eval",
                                             "bench", "notebook", "grade", "layernorm", "graph", "sample"};
  for (const std::string& c : commands) {
    list.push_back({c, {"--no-such-option"}});
    list.push_back({c, {"--no-such-option=3"}});
  }
  const std::string bad_csv = (scratch() / "bad.csv").string(), garbage = (scratch() / "garbage.ckpt").string();
  const std::vector<Misuse> specific = {
      {"demo", {"extra-argument"}},
      {"gradcheck", {"mul"}},
      {"fuzz", {"100"}},
      {"gradcheck", {"--seed"}},
      {"gradcheck", {"--seed", "abc"}},
      {"gradcheck", {"--seed", "-1"}},
      {"gradcheck", {"--seed", "1.5"}},
      {"gradcheck", {"--op", "no_such_op"}},
      {"fuzz", {"--graphs"}},
      {"fuzz", {"--graphs", "abc"}},
      {"fuzz", {"--graphs", "0"}},
      {"fuzz", {"--graphs", "-5"}},
      {"fuzz", {"--graphs", "nan"}},
      {"fuzz", {"--graphs", "1e3"}},
      {"fuzz", {"--seed", "-1"}},
      {"fuzz", {"--seed", "99999999999999999999999"}},
      {"fuzz", {"--seed", "9223372036854775807", "--graphs", "3"}},
      {"gradcheck", {"--op", "nosuchop"}},
      {"train", {"--epochs"}},
      {"train", {"--epochs", "abc"}},
      {"train", {"--epochs", "0"}},
      {"train", {"--epochs", "10000000000"}},
      {"eval", {"--model", "/tmp", "--dataset", "moons"}},
      {"train", {"--epochs", "-1"}},
      {"train", {"--epochs", "1.5"}},
      {"train", {"--batch-size", "0"}},
      {"train", {"--batch-size", "-3"}},
      {"train", {"--lr", "nan"}},
      {"train", {"--lr", "inf"}},
      {"train", {"--lr", "-0.1"}},
      {"train", {"--lr", "0"}},
      {"train", {"--lr", "fast"}},
      {"train", {"--momentum", "nan"}},
      {"train", {"--validation", "nan"}},
      {"train", {"--validation", "1"}},
      {"train", {"--clip", "nan"}},
      {"train", {"--weight-decay", "-1"}},
      {"train", {"--seed", "-1"}},
      {"train", {"--hidden", "0"}},
      {"train", {"--hidden", "64,,64"}},
      {"train", {"--hidden", "abc"}},
      {"train", {"--norm", "batchnorm9"}},
      {"train", {"--optimizer", "lbfgs"}},
      {"train", {"--activation", "swish9"}},
      {"train", {"--dataset", "mnist"}},
      {"train", {"--dataset", missing_file()}},
      {"train", {"--dataset", bad_csv}},
      // Before: a 65-million-parameter classifier, 100,001 classes, silent regression, std::bad_alloc.
      {"train", {"--dataset", (scratch() / "huge_label.csv").string()}},
      {"train", {"--dataset", (scratch() / "e5_label.csv").string()}},
      {"compare", {"--dataset", (scratch() / "huge_label.csv").string()}},
      {"train", {"--hidden", "999999,999999"}},
      {"compare", {"--hidden", "999999,999999"}},
      {"train", {"--dataset", "moons", "--label", "9"}},
      {"train", {"--epochs", "1", "--out", kUnwritable}},
      {"compare", {"--tolerance", "nan"}},
      {"compare", {"--tolerance", "-1"}},
      {"compare", {"--impl", "composed"}},
      {"compare", {"--epochs", "0"}},
      {"compare", {"--lr", "nan"}},
      {"compare", {"--dataset", missing_file()}},
      {"compare", {"--epochs", "1", "--out", kUnwritable}},
      {"train", {"--model", "rnn"}},
      {"train", {"--model", "gpt", "--hidden", "64"}},
      {"train", {"--model", "gpt", "--momentum", "0.5"}},
      {"train", {"--heads", "2"}},
      {"train", {"--dataset", "words"}},
      {"train", {"--model", "gpt", "--dataset", "moons"}},
      {"train", {"--model", "gpt", "--dataset", (scratch() / "missing.txt").string()}},
      {"train", {"--model", "gpt", "--width", "10", "--heads", "4"}},
      {"train", {"--model", "gpt", "--layers", "0"}},
      {"train", {"--model", "gpt", "--context", "-1"}},
      {"train", {"--model", "gpt", "--dropout", "1"}},
      {"train", {"--model", "gpt", "--norm", "none"}},
      {"train", {"--model", "gpt", "--norm-placement", "middle"}},
      {"train", {"--model", "gpt", "--optimizer", "sgd"}},
      {"train", {"--model", "gpt", "--schedule", "step"}},
      {"train", {"--model", "gpt", "--validation", "0"}},
      {"train", {"--model", "gpt", "--epochs", "1", "--out", kUnwritable}},
      {"compare", {"--model", "gpt", "--norm-placement", "pre,post", "--impl", "composed,fused"}},
      {"compare", {"--model", "gpt", "--hidden", "8"}},
      {"sample", {}},
      {"sample", {"--model"}},
      {"sample", {"--model", missing_file()}},
      {"sample", {"--model", garbage}},
      {"sample", {"--model", garbage, "--count", "0"}},
      {"sample", {"--model", garbage, "--count", "-1"}},
      {"sample", {"--model", garbage, "--temperature", "nan"}},
      {"sample", {"--model", garbage, "--temperature", "0"}},
      {"sample", {"--model", garbage, "--seed", "-1"}},
      {"sample", {"--model", garbage, "--max-length", "0"}},
      {"eval", {}},
      {"eval", {"--model"}},
      {"eval", {"--model", missing_file()}},
      {"eval", {"--model", garbage}},
      {"eval", {"--model", garbage, "--split", "test9"}},
      {"eval", {"--model", garbage, "--seed", "-1"}},
      {"eval", {"--model", garbage, "--seed", "abc"}},
      {"bench", {"--repeats"}},
      {"bench", {"--repeats", "0"}},
      {"bench", {"--repeats", "-1"}},
      {"bench", {"--repeats", "abc"}},
      {"bench", {"--case", "no_such_case"}},
      {"bench", {"--peer", "maybe"}},
      {"bench", {"--malloc", "maybe"}},
      {"notebook", {"no-such-action"}},
      {"notebook", {"render", "--format", "pdf"}},
      {"notebook", {"render", "--only", "no_such_lesson"}},
      {"notebook", {"render", "--source-dir", missing_file()}},
      {"notebook", {"render", "--bin-dir", missing_file()}},
      {"notebook", {"render", "--only", "01_tape", "--out", kUnwritable}},
      {"grade", {"--file", missing_file()}},
      {"grade", {"--file", bad_csv, "--exercise", "no_such_exercise"}},
      {"grade", {"--exercise"}},
      {"grade", {"--class", missing_file(), "--exercise", "softmax", "--csv", (scratch() / "s.csv").string()}},
      {"grade", {"--class", scratch().string(), "--exercise", "softmax"}},
      {"grade", {"--class", scratch().string(), "--csv", (scratch() / "s.csv").string()}},
      {"grade", {"--class", scratch().string(), "--exercise", "softmax", "--csv", kUnwritable}},
      {"grade", {"--csv", (scratch() / "s.csv").string(), bad_csv}},
      {"grade", {"--jobs", "0", bad_csv}},
      {"grade", {"--timeout", "-1", bad_csv}},
      {"grade", {"--timeout", "nan", bad_csv}},
      {"grade", {"--seed", "-3", bad_csv}},
      {"grade", {"--sandbox", "maybe", bad_csv}},
      {"layernorm", {"--input", "1,2; 3"}},
      {"layernorm", {"--input", "1,abc"}},
      {"layernorm", {"--input", "1,nan"}},
      {"layernorm", {"--input", ""}},
      {"layernorm", {"--input"}},
      {"layernorm", {"--input", "1,2,3", "--eps", "nan"}},
      // Before: NaN and a negative "max abs", exit 0.
      {"layernorm", {"--input", "1e308,-1e308,1e308"}},
      {"layernorm", {"--rms", "--input", "1e101,1"}},
      {"layernorm", {"--input", "1,2", "--gamma", "1e200,1"}},
      {"layernorm", {"--input", "1,2", "--grad-output", "1,-1e300"}},
      {"layernorm", {"--input", "1,2,3", "--eps", "-1"}},
      {"layernorm", {"--input", "1,2,3", "--eps", "0"}},
      {"layernorm", {"--input", "1,2,3", "--eps", "-1e-9"}},
      {"layernorm", {"--input", "1,2,3", "--precision", "0"}},
      {"layernorm", {"--input", "1,2,3", "--precision", "-1"}},
      {"layernorm", {"--input", "1,2,3", "--rows", "0"}},
      {"layernorm", {"--input", "1,2,3", "--rows", "-2"}},
      {"layernorm", {"--input", "1,2,3", "--seed", "-1"}},
      {"layernorm", {"--input", "1,2,3", "--gamma", "1,2"}},
      {"layernorm", {"--input", "1,2,3", "--grad-output", "1,2"}},
      {"layernorm", {"--input-file", missing_file()}},
      {"layernorm", {"--input-file", bad_csv}},
      {"layernorm", {"--input", "1,2,3", "--grad-output-file", missing_file()}},
      {"layernorm", {"--input", "1,2,3", "--output-file", kUnwritable}},
      {"graph", {"--what", "no-such-graph"}},
      {"graph", {"--input", "1,x"}},
      {"graph", {"--input", "1,2; 3"}},
      {"graph", {"--out", kUnwritable}},
      {"graph", {"--png", "g.png"}},
      {"graph", {"--out", kUnwritable, "--png", "g.png"}},
      {"graph", {"--out", "g.dot", "--png", "g.dot"}},
      {"graph", {"--out", "g.dot", "--png", "./g.dot"}},
  };
  list.insert(list.end(), specific.begin(), specific.end());
  return list;
}

std::vector<int> misuse_indices() {
  std::vector<int> v;
  for (std::size_t i = 0; i < misuses().size(); ++i) v.push_back(int(i));
  return v;
}

}  // namespace

BOOST_TEST_GLOBAL_FIXTURE(RemoveScratch);

BOOST_AUTO_TEST_CASE(every_subcommand_has_misuse_cases) {
  const Result help = run_cli({"--help"});
  BOOST_TEST_REQUIRE(help.status == 0);
  std::set<std::string> covered;
  for (const Misuse& m : misuses()) covered.insert(m.command);
  std::istringstream lines(help.out);
  std::string line;
  int listed = 0;
  bool in_commands = false;
  while (std::getline(lines, line)) {
    if (line == "commands:") in_commands = true;
    if (!in_commands || line.rfind("  ", 0) != 0) continue;
    const std::string name = line.substr(2, line.find(' ', 2) - 2);
    ++listed;
    BOOST_TEST(covered.count(name) == 1u, "autograd " << name << " has no misuse cases in this test");
    BOOST_TEST(run_cli({name, "--help"}).status == 0, "autograd " << name << " --help");
  }
  BOOST_TEST(listed >= 5);
}

BOOST_DATA_TEST_CASE(misuse_gives_one_line_and_status_2, bdata::make(misuse_indices()), index) {
  const Misuse m = misuses()[index];
  std::vector<std::string> args = {m.command};
  args.insert(args.end(), m.args.begin(), m.args.end());
  const Result r = run_cli(args);
  BOOST_TEST(r.status == 2, m << ": exit status " << r.status << ", stderr: " << r.err);
  const std::string prefix = "autograd " + m.command + ": ";
  BOOST_TEST(r.err.rfind(prefix, 0) == 0u, m << ": stderr does not start with '" << prefix << "': " << r.err);
  const bool one_line = !r.err.empty() && r.err.find('\n') == r.err.size() - 1;
  BOOST_TEST(one_line, m << ": stderr is not exactly one line: [" << r.err << "]");
  BOOST_TEST(r.out.empty(), m << ": printed to stdout before refusing: [" << r.out << "]");
  BOOST_TEST(leftovers().empty(), m << " left files behind");
  BOOST_TEST(!fs::exists(kUnwritable));
  BOOST_TEST(!fs::exists(scratch() / "missing"), m << " created the missing input's folder");
  fs::remove_all(scratch() / "missing");
}

BOOST_AUTO_TEST_CASE(an_unknown_command_is_one_line_and_status_2) {
  const Result r = run_cli({"no-such-command"});
  BOOST_TEST(r.status == 2);
  BOOST_TEST(r.err == "autograd: unknown command 'no-such-command' (autograd --help lists the commands)\n");
  BOOST_TEST(run_cli({}).status == 2);
}

// Before: `autograd demo > /dev/full` exited 0 though nothing was written.
BOOST_AUTO_TEST_CASE(output_that_cannot_be_written_is_a_failure) {
  const Result r = cli_test::run("demo >/dev/full");
  BOOST_TEST(r.status == 1);
  BOOST_TEST(r.err == "autograd demo: cannot write the standard output (No space left on device)\n");
}

// Before: past `ulimit -f` the kernel's SIGXFSZ killed the program mid-write
// (status 153, no message) and left the temporary file behind.
BOOST_AUTO_TEST_CASE(a_file_size_limit_is_a_message_and_leaves_nothing) {
  // The DOT text of the LayerNorm tape is several kB, past a 1-block limit.
  const Result r = cli_test::run_shell("ulimit -f 1 && " + quote(AUTOGRAD_CLI) + " graph --out g.dot >/dev/null", scratch() / "work");
  BOOST_TEST(r.status == 2, "exit status " << r.status);
  BOOST_TEST(r.err == "autograd graph: g.dot: cannot write (File too large)\n");
  BOOST_TEST(leftovers().empty(), "files left in the work folder");
}

// Before: a --out starting with '-' reached dot as an option (-V printed dot's
// version) and the command said it wrote a PNG that did not exist.
BOOST_AUTO_TEST_CASE(graph_file_names_starting_with_a_dash_are_files) {
  const Result r = run_cli({"graph", "--out=-V", "--png", "-x.png"});
  BOOST_TEST(r.status == 0, r.err);
  BOOST_TEST(slurp(scratch() / "work" / "-V").rfind("digraph", 0) == 0u);
  BOOST_TEST(slurp(scratch() / "work" / "-x.png").rfind("\x89PNG", 0) == 0u);
  fs::remove(scratch() / "work" / "-V");
  fs::remove(scratch() / "work" / "-x.png");
}

// Before: the program died of SIGPIPE without a word when its reader went away.
// The reader's end of the pipe is closed before the program starts, so every
// write fails (a `| head -1` would race with the program's first writes).
BOOST_AUTO_TEST_CASE(a_reader_that_goes_away_is_reported) {
  const std::string err = (scratch() / "stderr_pipe").string();
  int fds[2];
  BOOST_TEST_REQUIRE(::pipe(fds) == 0);
  ::close(fds[0]);
  const pid_t child = ::fork();
  if (child == 0) {
    ::dup2(fds[1], 1);
    const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(e, 2);
    ::execl(AUTOGRAD_CLI, AUTOGRAD_CLI, "demo", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(fds[1]);
  int raw = 0;
  ::waitpid(child, &raw, 0);
  BOOST_TEST_REQUIRE(WIFEXITED(raw));
  BOOST_TEST(WEXITSTATUS(raw) == 1);
  BOOST_TEST(slurp(err) == "autograd demo: cannot write the standard output (Broken pipe)\n");
}

// Before: a grade killed mid-way left its build folder in /tmp for good.
BOOST_AUTO_TEST_CASE(the_next_grade_removes_the_folder_of_a_killed_one) {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);  // a process id that no longer runs
  const fs::path stale = fs::temp_directory_path() / ("autograd-grade-" + std::to_string(child) + "-AbC123");
  fs::create_directories(stale / "inner");
  const fs::path alive = fs::temp_directory_path() / ("autograd-grade-" + std::to_string(::getpid()) + "-DeF456");
  fs::create_directories(alive);  // a grade that is still running: kept
  const Result r = run_cli({"grade", std::string(AUTOGRAD_SOURCE_DIR) + "/assignments/softmax/softmax.cpp"});
  BOOST_TEST(r.status == 1, r.err);  // the stub does not get full marks
  BOOST_TEST(!fs::exists(stale));
  BOOST_TEST(fs::exists(alive));
  fs::remove_all(alive);
}
