// Issue 37: a class run stopped with Ctrl-C at 8 of 16 wrote no CSV at all,
// and the CSV had no result label, no compiler error and no time. Now each
// finished row is appended as it finishes, Ctrl-C leaves every one of them,
// and --resume grades only the students without a row.
#define BOOST_TEST_MODULE cli_grade_resume
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <map>
#include <thread>
#include <vector>

#include "assignments/grading/csv_log.h"
#include "cli_grade.h"

using namespace cli_grade;

BOOST_TEST_GLOBAL_FIXTURE(Scratch);

namespace {

// The CSV's rows by file, each a map from column to field.
std::map<std::string, std::map<std::string, std::string>> rows_of(const std::string& text) {
  std::size_t complete = 0;
  const std::vector<std::vector<std::string>> records = grading::csv_records(text, complete);
  BOOST_TEST(complete == text.size(), "a row cut short:\n" << text);
  std::map<std::string, std::map<std::string, std::string>> rows;
  for (std::size_t r = 1; r < records.size(); ++r) {
    BOOST_TEST_REQUIRE(records[r].size() == records[0].size(), text);
    for (std::size_t c = 0; c < records[0].size(); ++c) rows[records[r][0]][records[0][c]] = records[r][c];
  }
  return rows;
}

// Waits (at most 10 minutes: three compiles at load 8) until grade PID runs the program of
// its submission `index`: with --jobs 1, every submission before it is finished by then.
bool wait_for_program(pid_t pid, int index) {
  const std::string mine = "autograd-grade-" + std::to_string(pid) + "-";
  const std::string program = "sub-" + std::to_string(index);
  for (int i = 0; i < 6000; ++i) {
    std::error_code ec;
    for (const fs::directory_entry& e : fs::directory_iterator(fs::temp_directory_path(), ec)) {
      if (e.path().filename().string().rfind(mine, 0) == 0 && fs::exists(e.path() / program / "child", ec)) return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

const std::string kSlow = "arma::mat softmax_backward(const arma::mat& y, const arma::mat&) { ::sleep(3000); return y; }\n";

}  // namespace

BOOST_AUTO_TEST_CASE(ctrl_c_keeps_every_finished_row_and_resume_grades_the_rest) {
  const fs::path dir = scratch() / "class", csv = scratch() / "scores.csv";
  fs::create_directories(dir);
  std::ofstream(dir / "a_right.cpp") << kHead << kRight;
  std::ofstream(dir / "b_broken.cpp") << kHead << kBroken;
  std::ofstream(dir / "c_slow.cpp") << kHead << kSlow;
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::dup2(null, 2);
    ::execl(AUTOGRAD_CLI, AUTOGRAD_CLI, "grade", "--class", dir.c_str(), "--exercise", "softmax", "--csv", csv.c_str(),
            "--timeout", "600", "--sandbox", bwrap_starts() ? "auto" : "none", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  const bool running = wait_for_program(pid, 2);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ::kill(pid, SIGINT);  // while c_slow sleeps
  int raw = 0;
  ::waitpid(pid, &raw, 0);
  BOOST_TEST_REQUIRE(running);
  BOOST_TEST((WIFEXITED(raw) && WEXITSTATUS(raw) == 130));
  BOOST_TEST_REQUIRE(fs::exists(csv));
  const auto stopped = rows_of(slurp(csv));
  BOOST_TEST_REQUIRE(stopped.size() == 2u, slurp(csv));
  BOOST_TEST(stopped.at("a_right.cpp").at("result") == "graded");
  BOOST_TEST(stopped.at("a_right.cpp").at("percent") == "100");
  BOOST_TEST(stopped.at("a_right.cpp").at("mistakes") == "");
  BOOST_TEST(stopped.at("b_broken.cpp").at("result") == "does-not-compile");
  BOOST_TEST(has(stopped.at("b_broken.cpp").at("compiler_error"), "error: expected primary-expression"));
  BOOST_TEST(!has(stopped.at("b_broken.cpp").at("compiler_error"), "\n"));
  BOOST_TEST(has(stopped.at("a_right.cpp").at("finished"), "Z"));
  BOOST_TEST(!stopped.at("a_right.cpp").at("seconds").empty());

  std::ofstream(dir / "c_slow.cpp") << kHead << kRight;  // fixed meanwhile: graded now, as it is
  const Run again = grade("--class " + quote(dir.string()) + " --exercise softmax --csv " + quote(csv.string()) + " --resume");
  BOOST_TEST_REQUIRE(again.status == 0, again.out << again.err);
  BOOST_TEST(has(again.out, "grading 1 submissions"), again.out);
  BOOST_TEST(!has(again.out, "a_right.cpp: graded"), again.out);
  const auto resumed = rows_of(slurp(csv));
  BOOST_TEST_REQUIRE(resumed.size() == 3u, slurp(csv));
  BOOST_TEST(resumed.at("a_right.cpp") == stopped.at("a_right.cpp"));  // kept as it was: same seed, same time
  BOOST_TEST(resumed.at("b_broken.cpp") == stopped.at("b_broken.cpp"));
  BOOST_TEST(resumed.at("c_slow.cpp").at("percent") == "100");
}

BOOST_AUTO_TEST_CASE(resume_drops_a_row_cut_short_and_refuses_another_header) {
  const fs::path dir = scratch() / "cut", csv = scratch() / "cut.csv";
  fs::create_directories(dir);
  std::ofstream(dir / "a_wrong.cpp") << kHead
                                     << "arma::mat softmax_backward(const arma::mat& y, const arma::mat& dy) { return -y % dy; }\n";
  const Run first = grade("--class " + quote(dir.string()) + " --exercise softmax --csv " + quote(csv.string()));
  BOOST_TEST_REQUIRE(first.status == 0, first.out << first.err);
  const std::string whole = slurp(csv);
  BOOST_TEST(rows_of(whole).at("a_wrong.cpp").at("result") == "graded");
  BOOST_TEST(!rows_of(whole).at("a_wrong.cpp").at("mistakes").empty());
  std::ofstream(csv, std::ios::app) << "z_cut.cpp,graded,gra";  // a kill in the middle of an append
  const Run again = grade("--class " + quote(dir.string()) + " --exercise softmax --csv " + quote(csv.string()) + " --resume");
  BOOST_TEST_REQUIRE(again.status == 0, again.out << again.err);
  BOOST_TEST(slurp(csv) == whole);  // the cut row dropped, nothing regraded
  std::ofstream(csv) << "file,something,else\n";
  const Run other = grade("--class " + quote(dir.string()) + " --exercise softmax --csv " + quote(csv.string()) + " --resume");
  BOOST_TEST(other.status == 2, other.out << other.err);
  BOOST_TEST(has(other.err, "is not this run's"), other.err);
  BOOST_TEST(slurp(csv) == "file,something,else\n");
}
