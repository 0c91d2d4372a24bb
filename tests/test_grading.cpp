#define BOOST_TEST_MODULE grading
#include <boost/test/unit_test.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "assignments/grading/class.h"
#include "assignments/grading/class_mistakes.h"
#include "assignments/grading/feedback.h"
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

bool cli_test_has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

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

// A student's name becomes one file inside the feedback folder, whatever it holds.
BOOST_AUTO_TEST_CASE(a_students_name_never_leaves_the_feedback_folder) {
  const std::vector<std::string> hostile = {"..", ".", "../../etc/passwd", "/etc/passwd", ".hidden", "a\x1b[2Jb.cpp",
                                            "osc\x1b]0;pwned\x07", "bad\xff\xfeutf8", "c1\xc2\x9b.cpp", "new\nline",
                                            "x\\x2fy", "x\\x2e", "", std::string(255, 'a'), "Jos\xc3\xa9"};
  std::set<std::string> names;
  for (std::size_t i = 0; i < hostile.size(); ++i) {
    const std::string name = feedback_file_name(hostile[i], i);
    BOOST_TEST(name.find('/') == std::string::npos, name);
    BOOST_TEST(name.front() != '.', name);
    BOOST_TEST(name.size() <= 255u, name);
    for (const char c : name) BOOST_TEST((static_cast<unsigned char>(c) >= 0x20 && c != 0x7f), name);
    // Entries of one folder never hold a '/'; those that differ get different files.
    if (hostile[i].find('/') == std::string::npos) BOOST_TEST(names.insert(name).second, name << " is another's too");
  }
  BOOST_TEST(feedback_file_name("alice/softmax.cpp", 0) == "alice.txt");  // a student folder: the student's name
  BOOST_TEST(feedback_file_name("bob.cpp", 1) == "bob.cpp.txt");
  BOOST_TEST(feedback_file_name("Jos\xc3\xa9", 2) == "Jos\xc3\xa9.txt");  // valid UTF-8 stays
  BOOST_TEST(feedback_file_name("../../etc/passwd", 3) == "\\x2e..txt");
  BOOST_TEST(feedback_file_name("a\x1b[2Jb.cpp", 4) == "a\\x1b[2Jb.cpp.txt");
  // Written where it belongs, atomically: no temporary file is left beside it.
  const fs::path folder = scratch() / "feedback";
  fs::create_directories(folder);
  Outcome o;
  o.status = "refused";
  o.reason = "is a symbolic link";
  const fs::path written = write_feedback(folder, {"../../escape.cpp", o}, 0);
  BOOST_TEST(written.parent_path() == folder);
  BOOST_TEST(std::distance(fs::directory_iterator(folder), fs::directory_iterator()) == 1);
  BOOST_TEST(!fs::exists(scratch() / "escape.cpp.txt"));
}

namespace {

kit::GradeRow check_row(const std::string& result, int points, double yours = 0, double expected = 0) {
  kit::GradeRow r;
  r.check = "random 3x5";
  r.gradient = "dx";
  r.points = points;
  r.result = result;
  if (points == 0) {
    r.diagnosis.kind = ag::Mistake::WrongSign;
    r.diagnosis.hint = "flip the sign";
    r.diagnosis.elementwise = true;
    r.diagnosis.worst_row = 2;
    r.diagnosis.worst_col = 4;
    r.diagnosis.worst_yours = yours;
    r.diagnosis.worst_expected = expected;
  }
  return r;
}

Outcome graded_outcome(const std::vector<kit::GradeRow>& rows) {
  Outcome o;
  o.status = "graded";
  o.report.exercise = "softmax";
  o.report.title = "Softmax backward";
  o.report.seed = 42;
  o.report.rows = rows;
  return o;
}

}  // namespace

// The feedback file: the escaped outputs, every check with the numbers where it is furthest off, the mistakes.
BOOST_AUTO_TEST_CASE(the_feedback_shows_the_numbers_and_only_harmless_text) {
  Outcome o = graded_outcome({check_row("correct", 1), check_row("wrong sign", 0, -0.25, 0.25), check_row("wrong sign", 0)});
  o.program_output = "debug \x1b[2J \xc2\x9b \xff\n";  // as a caller that forgot to escape it would pass it
  o.compiler_output = "warning: unused variable\n";
  const std::string text = feedback_text({"evil\x1b]0;x\x07.cpp", o});
  BOOST_TEST(text.find_first_of("\x1b\x07\xc2\xff") == std::string::npos, text);
  BOOST_TEST(cli_test_has(text, "evil\\x1b]0;x\\x07.cpp"), text);
  BOOST_TEST(cli_test_has(text, "  | debug \\x1b[2J \\xc2\\x9b \\xff\n"), text);
  BOOST_TEST(cli_test_has(text, "The compiler said:\n  | warning: unused variable\n"), text);
  BOOST_TEST(cli_test_has(text, "random 3x5, dx: wrong sign (0/1)\n"
                                "      furthest off at row 2, column 4 (counting from 0): expected 0.25, yours -0.25"), text);
  BOOST_TEST(cli_test_has(text, "hint: flip the sign"), text);
  BOOST_TEST(text.find("hint: flip the sign") == text.rfind("hint: flip the sign"), text);  // each hint once
  BOOST_TEST(cli_test_has(text, "result: graded, 1/3 (33%)"), text);
  BOOST_TEST(cli_test_has(text, "seed 42"), text);
  BOOST_TEST(cli_test_has(text, "mistakes: wrong sign\n"), text);
}

// The class's mistakes: a student once per mistake, "partly correct (k/n)" as one, most students first.
BOOST_AUTO_TEST_CASE(the_mistakes_of_a_class_are_counted_by_student) {
  Outcome broken;
  broken.status = "does not compile";
  const std::vector<Graded> all = {
      {"a.cpp", graded_outcome({check_row("wrong sign", 0), check_row("wrong sign", 0)})},
      {"b.cpp", graded_outcome({check_row("wrong sign", 0), check_row("partly correct (4/15)", 0)})},
      {"c.cpp", graded_outcome({check_row("partly correct (7/15)", 0)})},
      {"d.cpp", graded_outcome({check_row("correct", 1)})},
      {"e\x1b[2J.cpp", broken}};
  const std::vector<MistakeCount> counts = count_mistakes(all);
  BOOST_TEST_REQUIRE(counts.size() == 3u);
  BOOST_TEST(counts[0].mistake == "partly correct");  // 2 students, before "wrong sign" by name
  BOOST_TEST(counts[0].students.size() == 2u);
  BOOST_TEST(counts[1].mistake == "wrong sign");
  BOOST_TEST((counts[1].students == std::vector<std::string>{"a.cpp", "b.cpp"}));
  BOOST_TEST(counts[2].mistake == "does not compile");
  const std::string table = mistakes_table("softmax", counts, all.size(), 1, 2);
  BOOST_TEST(cli_test_has(table, "5 submissions, 1 with full marks, 2 kept from an earlier run not counted"), table);
  BOOST_TEST(cli_test_has(table, "  2         wrong sign        a.cpp, b.cpp\n"), table);
  BOOST_TEST(cli_test_has(table, "e\\x1b[2J.cpp"), table);  // names as the terminal shows them
  BOOST_TEST(table.find('\x1b') == std::string::npos, table);
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
