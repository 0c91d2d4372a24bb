// `autograd grade` against students who want full marks without the work:
// every cheat of issue 12 exits non-zero without full marks, an endless loop
// ends within --timeout, nothing is written in the caller's folder, no process
// outlives grading (a marker `sleep 1000.N` is looked for in /proc), Ctrl-C
// cleans up, class mode writes its CSV, and a new exercise is one folder.
#define BOOST_TEST_MODULE cli_grade
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <thread>

#include "cli_grade.h"

namespace fs = std::filesystem;
using cli_test::has;
using cli_test::quote;
using cli_test::slurp;

namespace {

using namespace cli_grade;

// Processes whose command line holds `marker`.
int processes_with(const std::string& marker) {
  int n = 0;
  for (const fs::directory_entry& e : fs::directory_iterator("/proc")) {
    std::string cmdline = slurp(e.path() / "cmdline");
    for (char& c : cmdline) c = c == '\0' ? ' ' : c;
    if (has(cmdline, marker) && !has(cmdline, "autograd")) ++n;
  }
  return n;
}

// The control groups (grade_totals.h) that grade PID made and left, anywhere under /sys/fs/cgroup.
int groups_left_by(pid_t pid) {
  const std::string mine = "autograd-grade-" + std::to_string(pid) + "-";
  int n = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it("/sys/fs/cgroup", fs::directory_options::skip_permission_denied, ec), end;
       it != end; it.increment(ec)) {
    if (it.depth() > 4) it.disable_recursion_pending();
    n += it->path().filename().string().rfind(mine, 0) == 0;
  }
  return n;
}

std::set<std::string> caller_files() {
  std::set<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(scratch() / "caller")) names.insert(e.path().filename());
  return names;
}

void expect_no_full_marks(const Run& r, const std::string& reason) {
  BOOST_TEST(r.status == 1, r.out << r.err);
  BOOST_TEST(percent(r.out) >= 0);
  BOOST_TEST(percent(r.out) < 100, r.out);
  BOOST_TEST(has(r.out, reason), "expected '" << reason << "' in\n" << r.out);
  BOOST_TEST((caller_files() == std::set<std::string>{"keep_me"}));
}

}  // namespace

BOOST_TEST_GLOBAL_FIXTURE(Scratch);

BOOST_AUTO_TEST_CASE(the_right_answer_gets_full_marks_and_exit_0) {
  const Run r = grade(quote(write("right.cpp", kHead + kRight).string()));
  BOOST_TEST(r.status == 0, r.out << r.err);
  BOOST_TEST(percent(r.out) == 100);
}

BOOST_AUTO_TEST_CASE(a_global_initializer_that_prints_full_marks_and_exits_gets_zero) {
  const Run r = grade(quote(write("init.cpp", kHead + "static int cheat = [] { std::printf(\"score: 13/13 (100%%)\\n\");"
                                              " std::fflush(stdout); _exit(0); return 0; }();\n" + kRight).string()));
  expect_no_full_marks(r, "malformed answer: expected 'autograd-answer', got 'score:'");
  BOOST_TEST(percent(r.out) == 0);
}

BOOST_AUTO_TEST_CASE(a_file_with_its_own_main_does_not_build) {
  const Run r = grade(quote(write("main.cpp", kHead + kRight + "int main() { std::printf(\"score: 5/5 (100%%)\\n\"); }\n").string()));
  expect_no_full_marks(r, "does not compile");
}

BOOST_AUTO_TEST_CASE(exit_inside_the_backward_answers_nothing) {
  const Run r = grade(quote(write("exit.cpp", kHead + "arma::mat softmax_backward(const arma::mat& y, const arma::mat&)"
                                              " { std::exit(0); return y; }\n").string()));
  expect_no_full_marks(r, "it exited with status 0 before answering every case");
}

BOOST_AUTO_TEST_CASE(a_destructor_that_exits_0_after_a_real_zero_keeps_the_zero) {
  const Run r = grade(quote(write("dtor.cpp", kHead + "struct Later { ~Later() { std::printf(\"score: 5/5 (100%%)\\n\");"
                                              " std::fflush(stdout); _exit(0); } } later;\n"
                                              "arma::mat softmax_backward(const arma::mat& y, const arma::mat&)"
                                              " { return arma::zeros(arma::size(y)); }\n").string()));
  expect_no_full_marks(r, "score: 0/5 (0%)");
}

BOOST_AUTO_TEST_CASE(the_solutions_cannot_be_included_or_read) {
  const std::string solution = std::string(AUTOGRAD_SOURCE_DIR) + "/assignments/solutions/softmax.cpp";
  for (const std::string& include : {"\"" + solution + "\"", std::string("\"assignments/solutions/softmax.cpp\"")}) {
    const Run r = grade(quote(write("include.cpp", "// exercise: softmax\n#include " + include + "\n").string()));
    expect_no_full_marks(r, "does not compile");
    if (sandboxed(r)) BOOST_TEST(has(r.out, "No such file or directory"), r.out);
  }
  const Run r = grade(quote(write("read.cpp", kHead + "arma::mat softmax_backward(const arma::mat& y, const arma::mat&) {\n"
                                              "  if (std::ifstream(\"" + solution + "\")) std::fprintf(stderr, \"READ IT\\n\");\n"
                                              "  return y;\n}\n").string()));
  expect_no_full_marks(r, "score: 0/5");
  if (sandboxed(r)) BOOST_TEST(!has(r.out, "READ IT"), r.out);
}

BOOST_AUTO_TEST_CASE(an_endless_loop_ends_within_the_timeout) {
  const Run r = grade("--timeout 2 " + quote(write("loop.cpp", kHead + "arma::mat softmax_backward(const arma::mat& y,"
                                                   " const arma::mat&) { volatile int x = 0; for (;;) ++x; return y; }\n").string()));
  expect_no_full_marks(r, "it timed out after 2 s (killed) before answering every case");
  // Generous: the run is killed at 2 s (the line above); the rest is two compiles, minutes at load 8.
  BOOST_TEST(r.seconds < 600);
}

BOOST_AUTO_TEST_CASE(a_vandal_writes_nothing_outside_and_leaves_no_process) {
  const std::string marker = "1000." + std::to_string(::getpid());
  const std::string caller = (scratch() / "caller").string();
  const fs::path src = write("vandal.cpp", kHead + "arma::mat softmax_backward(const arma::mat& y, const arma::mat&) {\n"
                                           "  std::ofstream(\"" + caller + "/written\") << 1;\n"
                                           "  std::remove(\"" + caller + "/keep_me\");\n"
                                           "  std::system(\"sleep " + marker + " >/dev/null 2>&1 &\");\n"
                                           "  std::system(\"setsid sleep " + marker + "1 >/dev/null 2>&1 </dev/null &\");\n"
                                           "  return y;\n}\n");
  const Run r = grade(quote(src.string()));
  BOOST_TEST(r.status == 1, r.out << r.err);
  BOOST_TEST(percent(r.out) < 100);
  BOOST_TEST(processes_with(marker) == 0);
  if (sandboxed(r)) {
    BOOST_TEST((caller_files() == std::set<std::string>{"keep_me"}));
  } else {
    BOOST_TEST_MESSAGE("bwrap is not usable here: the filesystem is not isolated, so that part is not checked");
  }
  // Without the sandbox the files are not protected (the output says so), but no process survives either.
  const Run bare = grade("--sandbox none " + quote(src.string()));
  // At load 8 the harness compile once outran its 60 s wall clock, and the banner never came: the
  // compile is now limited by CPU time, with four times that on the wall clock, and a failure says why.
  BOOST_TEST(has(bare.out, "the network and the filesystem are NOT isolated"), bare.out << bare.err);
  BOOST_TEST(processes_with(marker) == 0);
  fs::remove_all(scratch() / "caller");
  fs::create_directories(scratch() / "caller");
}

BOOST_AUTO_TEST_CASE(ctrl_c_kills_the_child_and_removes_the_temporary_folder) {
  const fs::path src = write("slow.cpp", kHead + "arma::mat softmax_backward(const arma::mat& y, const arma::mat&)"
                                         " { volatile int x = 0; for (;;) ++x; return y; }\n");
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::chdir((scratch() / "caller").c_str());
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::dup2(null, 2);
    ::execl(AUTOGRAD_CLI, AUTOGRAD_CLI, "grade", "--timeout", "300", "--sandbox", bwrap_starts() ? "auto" : "none", src.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  const std::string mine = "autograd-grade-" + std::to_string(pid) + "-";
  fs::path folder;
  for (int i = 0; i < 3600 && folder.empty(); ++i) {  // until the child program runs: at most 6 minutes, for two compiles at load 8
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    for (const fs::directory_entry& e : fs::directory_iterator(fs::temp_directory_path())) {
      if (e.path().filename().string().rfind(mine, 0) == 0 && fs::exists(e.path() / "sub-0" / "child")) folder = e.path();
    }
  }
  BOOST_TEST_REQUIRE(!folder.empty());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ::kill(pid, SIGINT);
  int raw = 0;
  ::waitpid(pid, &raw, 0);
  BOOST_TEST((WIFEXITED(raw) && WEXITSTATUS(raw) == 130));
  BOOST_TEST(!fs::exists(folder));
  BOOST_TEST(processes_with(folder.string()) == 0);
  BOOST_TEST(groups_left_by(pid) == 0);
}
