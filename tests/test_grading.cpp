#define BOOST_TEST_MODULE grading
#include <boost/test/unit_test.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "assignments/grading/class.h"
#include "assignments/grading/run.h"
#include "assignments/grading/sandbox.h"
#include "assignments/grading/text.h"
#include "autograd/error.h"
#include "cli_grade.h"  // bwrap_starts

// The grader library (assignments/grading/), called directly: the sandbox's
// verdicts on a program, the text it shows of a program's output, the CSV
// cells, which exercise a file is for, and one submission graded end to end.
namespace fs = std::filesystem;
using namespace grading;

namespace {

fs::path scratch() {
  static const fs::path dir = [] {
    const fs::path d = fs::temp_directory_path() / ("ag_test_grading_" + std::to_string(::getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

struct RemoveScratch {
  ~RemoveScratch() { fs::remove_all(scratch()); }
};
BOOST_TEST_GLOBAL_FIXTURE(RemoveScratch);

RunResult shell(const std::string& script, const Limits& limits = Limits{}, const std::string& input = "") {
  return run_limited({"/bin/sh", "-c", script}, scratch(), {}, limits, Isolation::None, input);
}

fs::path write(const std::string& name, const std::string& text) {
  const fs::path p = scratch() / name;
  std::ofstream(p) << text;
  return p;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_program_gets_its_input_and_its_output_and_status_come_back) {
  const RunResult r = shell("read x; echo got $x; echo note >&2; exit 3", Limits{}, "hi\n");
  BOOST_TEST(r.exit_status == 3);
  BOOST_TEST(r.out == "got hi\n");
  BOOST_TEST(r.err == "note\n");
  BOOST_TEST(!r.exited_ok());
  BOOST_TEST(r.describe(Limits{}) == "exited with status 3");
}

BOOST_AUTO_TEST_CASE(a_program_past_its_wall_clock_is_killed) {
  Limits limits;
  limits.wall_seconds = 0.5;
  const RunResult r = shell("sleep 300", limits);
  BOOST_TEST(r.timed_out);
  BOOST_TEST(r.describe(limits) == "timed out after 0.5 s (killed)");
}

BOOST_AUTO_TEST_CASE(a_crash_is_named_by_its_signal) {
  const RunResult r = shell("kill -SEGV $$");
  BOOST_TEST(r.signal == SIGSEGV);
  BOOST_TEST(r.describe(Limits{}) == "was killed by SIGSEGV (Segmentation fault)");
}

BOOST_AUTO_TEST_CASE(a_flood_of_output_is_cut_and_killed) {
  Limits limits;
  limits.output_bytes = 1000;
  const RunResult r = shell("yes", limits);
  BOOST_TEST(r.output_overflow);
  BOOST_TEST(r.out.size() <= 1000u + 65536u);
  BOOST_TEST(r.describe(limits) == "wrote more than 1000 bytes of output (killed)");
}

BOOST_AUTO_TEST_CASE(a_programs_output_is_shown_as_harmless_text) {
  BOOST_TEST(as_text("\x1b[2Jok\r\n\x80") == "\\x1b[2Jok\\x0d\n\\x80");
  BOOST_TEST(as_text("a\nb", false) == "a\\x0ab");
  BOOST_TEST(cut_as_text("abcdef", 2) == "ab\n[... 4 more bytes not shown]\n");
}

BOOST_AUTO_TEST_CASE(csv_cells_are_quoted_and_never_formulas) {
  BOOST_TEST(csv_field("plain") == "plain");
  BOOST_TEST(csv_field("a,b") == "\"a,b\"");
  BOOST_TEST(csv_field("say \"hi\"") == "\"say \"\"hi\"\"\"");
  BOOST_TEST(csv_field("=1+1").front() != '=');
}

BOOST_AUTO_TEST_CASE(the_exercise_comes_from_the_option_the_file_or_its_folder) {
  const fs::path marked = write("mine.cpp", "// exercise: softmax\nint x;\n");
  BOOST_TEST(exercise_of(marked, "") == "softmax");
  BOOST_TEST(exercise_of(marked, "layernorm") == "layernorm");
  const fs::path unmarked = write("other.cpp", "int x;\n");
  BOOST_CHECK_THROW(exercise_of(unmarked, ""), ag::DataError);  // the folder's name is no exercise: exit status 2
  BOOST_CHECK_THROW(exercise_of(marked, "no_such_exercise"), ag::DataError);
}

// One right and one broken softmax backward, built and graded by the library as `autograd grade` does.
BOOST_AUTO_TEST_CASE(a_right_submission_gets_full_marks_and_a_broken_one_none) {
  const std::string head = "// exercise: softmax\n#include \"assignments/softmax/softmax.h\"\n";
  const fs::path right = write("right.cpp", head + "arma::mat softmax_backward(const arma::mat& y, const arma::mat& dy) {\n"
                                                   "  const arma::vec s = arma::sum(dy % y, 1);\n  return y % (dy.each_col() - s);\n}\n");
  const fs::path broken = write("broken.cpp", head + "this is not C++\n");
  const GradeSetup setup = prepare_grading("softmax", cli_grade::bwrap_starts() ? "auto" : "none", 60, 600);
  const RemoveOnExit remove{setup.root};
  const Outcome good = grade_submission(setup, right, 7, 0, false);
  BOOST_TEST(good.status == "graded", good.reason << good.compiler_output);
  BOOST_TEST(good.report.max_score() > 0);
  BOOST_TEST(good.report.score() == good.report.max_score());
  const Outcome bad = grade_submission(setup, broken, 7, 1, false);
  BOOST_TEST(bad.status == "does not compile");
  BOOST_TEST(bad.report.score() == 0);
  kill_orphans();
}

BOOST_AUTO_TEST_CASE(the_folders_of_dead_grades_are_removed_and_a_live_ones_kept) {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);  // a process id that no longer runs
  const fs::path dead = fs::temp_directory_path() / ("autograd-grade-" + std::to_string(child) + "-AbC123");
  const fs::path live = fs::temp_directory_path() / ("autograd-grade-" + std::to_string(::getpid()) + "-AbC123");
  fs::create_directories(dead / "sub-0");
  fs::create_directories(live);
  remove_folders_of_dead_grades();
  BOOST_TEST(!fs::exists(dead));
  BOOST_TEST(fs::exists(live));
  fs::remove_all(live);
}
