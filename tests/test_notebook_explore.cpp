// Exploring a lesson: with --explore a lesson program reports each failed
// check ("check FAILED: ...", its numbers and its source line) and runs on,
// then exits 1; `autograd notebook render` writes a lesson whose checks failed
// with the failures on its page, renders the lessons after it, and exits 1
// naming it. The lesson that fails is tests/notebook_fixture/01_failing_check.cpp.
#define BOOST_TEST_MODULE notebook_explore
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/cli_run.h"

namespace fs = std::filesystem;
using cli_test::has;
using cli_test::quote;
using cli_test::slurp;

namespace {

const fs::path kFixture = fs::path(AUTOGRAD_SOURCE_DIR) / "tests" / "notebook_fixture" / "01_failing_check.cpp";

// The 1-based line of the fixture holding `part` (the test reads it rather than hard-coding it).
int line_of(const std::string& part) {
  std::ifstream in(kFixture);
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    if (has(line, part)) return n;
  }
  BOOST_FAIL("the fixture has no line with " << part);
  return 0;
}

// A scratch folder, removed at the end of the test.
struct Scratch {
  fs::path dir = fs::temp_directory_path() / ("ag_explore_" + std::to_string(::getpid()));
  Scratch() {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Scratch() { fs::remove_all(dir); }
};

// A lessons folder holding the failing fixture as lesson 01 and lesson 01_tape as lesson 02
// (sources, and the programs as symbolic links named as the renderer looks for them).
void two_lessons(const fs::path& dir) {
  fs::create_directories(dir / "src");
  fs::create_directories(dir / "bin");
  fs::copy_file(kFixture, dir / "src" / "01_failing_check.cpp");
  fs::copy_file(fs::path(AUTOGRAD_SOURCE_DIR) / "notebooks" / "01_tape.cpp", dir / "src" / "02_tape.cpp");
  fs::create_symlink(FAILING_LESSON_BIN, dir / "bin" / "notebook_01_failing_check");
  fs::create_symlink(TAPE_LESSON_BIN, dir / "bin" / "notebook_02_tape");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(a_lesson_program)

// Before: --explore was ignored and the first failed check stopped the program.
BOOST_AUTO_TEST_CASE(explore_reports_each_failed_check_with_its_line_and_runs_on) {
  Scratch s;
  const cli_test::Run r = cli_test::run_shell(quote(FAILING_LESSON_BIN) + " --out " + quote((s.dir / "img").string()) + " --explore");
  BOOST_TEST(r.status == 1, r.err);
  const std::string failed_check = "check FAILED: two plus two = 4, expected 5 (tolerance 0.1)  [line " +
                                   std::to_string(line_of("FAILS HERE")) + "]";
  BOOST_TEST(has(r.out, failed_check), r.out);
  BOOST_TEST(has(r.out, "the rest of the failing cell ran"), r.out);
  BOOST_TEST(has(r.out, "check: a fact after the failure  [ok]"), r.out);
  BOOST_TEST(has(r.out, "check FAILED: the cell stopped: a lesson's own error  [line " +
                            std::to_string(line_of("a lesson's own error") - 1) + "]"), r.out);
  BOOST_TEST(has(r.out, "the last cell ran"), r.out);
  BOOST_TEST(has(r.err, "2 checks failed"), r.err);
}

BOOST_AUTO_TEST_CASE(without_explore_the_first_failed_check_stops_it_naming_its_line) {
  Scratch s;
  const cli_test::Run r = cli_test::run_shell(quote(FAILING_LESSON_BIN) + " --out " + quote((s.dir / "img").string()));
  BOOST_TEST(r.status == 1);
  BOOST_TEST(has(r.err, "two plus two = 4, expected 5 (tolerance 0.1)  [line " + std::to_string(line_of("FAILS HERE")) + "]"),
             r.err);
  BOOST_TEST(!has(r.out, "the rest of the failing cell ran"), r.out);
  BOOST_TEST(!has(r.out, "the last cell ran"), r.out);
}

BOOST_AUTO_TEST_CASE(an_unknown_argument_is_named) {
  const cli_test::Run r = cli_test::run_shell(quote(FAILING_LESSON_BIN) + " --explor");
  BOOST_TEST(r.status == 2);
  BOOST_TEST(has(r.err, "unknown argument '--explor'"), r.err);
  BOOST_TEST(!has(r.out, "the first cell ran"), r.out);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(the_render)

// Before: the first failing lesson stopped `autograd notebook render`, so the
// lessons after it were never rendered, and its own page was not written.
BOOST_AUTO_TEST_CASE(renders_every_lesson_and_names_the_one_whose_check_failed) {
  Scratch s;
  two_lessons(s.dir);
  const cli_test::Run r = cli_test::run("notebook render --format md,json --source-dir " + quote((s.dir / "src").string()) +
                                        " --bin-dir " + quote((s.dir / "bin").string()) + " --out " +
                                        quote((s.dir / "out").string()));
  BOOST_TEST(r.status == 1, r.err);
  BOOST_TEST(has(r.err, "1 of 2 lessons failed: 01_failing_check"), r.err);
  BOOST_TEST(has(r.err, "01_failing_check: 2 checks failed"), r.err);
  // The lesson after the failing one is rendered.
  BOOST_TEST(has(slurp(s.dir / "out" / "02_tape.md"), "saved bytes"));
  BOOST_TEST(fs::exists(s.dir / "out" / "02_tape.json"));
  // The failing lesson's page shows which check failed and where; the cells after it are there.
  const std::string line = "[line " + std::to_string(line_of("FAILS HERE")) + "]";
  const std::string md = slurp(s.dir / "out" / "01_failing_check.md");
  BOOST_TEST(has(md, "check FAILED: two plus two = 4, expected 5 (tolerance 0.1)  " + line), md);
  BOOST_TEST(has(md, "the last cell ran"), md);
  const std::string json = slurp(s.dir / "out" / "01_failing_check.json");
  BOOST_TEST(has(json, "\"failed_checks\": [\"check FAILED: two plus two = 4, expected 5 (tolerance 0.1)  " + line + "\""), json);
  for (const fs::directory_entry& e : fs::directory_iterator(s.dir / "out")) {
    BOOST_TEST(e.path().filename().string().rfind(".autograd-render-", 0) != 0u, "left " << e.path());
  }
}

BOOST_AUTO_TEST_CASE(run_explore_shows_the_lesson_in_the_terminal) {
  Scratch s;
  two_lessons(s.dir);
  const std::string where = " --source-dir " + quote((s.dir / "src").string()) + " --bin-dir " + quote((s.dir / "bin").string()) +
                            " --out " + quote((s.dir / "out").string());
  const cli_test::Run r = cli_test::run("notebook run 01_failing_check --explore" + where);
  BOOST_TEST(r.status == 1, r.err);
  BOOST_TEST(has(r.out, "check FAILED: two plus two"), r.out);
  BOOST_TEST(has(r.out, "the last cell ran"), r.out);
  const cli_test::Run missing = cli_test::run("notebook run 03_missing" + where);
  BOOST_TEST(missing.status == 2);
  BOOST_TEST(has(missing.err, "no lesson named '03_missing'"), missing.err);
  const cli_test::Run named = cli_test::run("notebook render 01_failing_check" + where);
  BOOST_TEST(named.status == 2);
  BOOST_TEST(has(named.err, "render takes no lesson name ('01_failing_check'): --only 01_failing_check"), named.err);
}

BOOST_AUTO_TEST_SUITE_END()
