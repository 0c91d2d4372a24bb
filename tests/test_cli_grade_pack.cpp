// Issue 37: the packs. `autograd grade --pack gradescope` writes the zip Gradescope's autograder
// takes; here it is unpacked into a scratch /autograder tree (AUTOGRAD_AUTOGRADER_ROOT) and its
// run_autograder grades a right, a wrong and a non-compiling submission with the build's grader
// (AUTOGRAD_PROGRAM, so setup.sh is not run), each results.json checked against Gradescope's
// documented format, and one grader run per submission counted. Folders that hold no .cpp, two of
// them, a link or a hostile name each get one results.json. `--student-pack DIR` leaves out the
// solutions, the lesson answers and the hidden cases.
#define BOOST_TEST_MODULE cli_grade_pack
#include <boost/test/unit_test.hpp>

#include <set>

#include "cli_grade.h"
#include "json_read.h"
#include "autograd/error.h"
#include "assignments/grading/pack.h"
#include "assignments/kit/spec.h"

using namespace cli_grade;
using json_read::Value;

BOOST_TEST_GLOBAL_FIXTURE(Scratch);

namespace {

// Gradescope's results.json as its documentation (gradescope-autograders.readthedocs.io, "specs")
// lists it: the keys it knows, their types, the values of its enumerations.
const std::set<std::string> kTopKeys = {"score", "execution_time", "output", "output_format", "test_output_format",
                                        "test_name_format", "visibility", "stdout_visibility", "extra_data",
                                        "tests", "leaderboard"};
const std::set<std::string> kTestKeys = {"score", "max_score", "status", "name", "name_format", "number", "output",
                                         "output_format", "tags", "visibility", "extra_data"};
const std::set<std::string> kFormats = {"text", "html", "simple_format", "md", "ansi"};
const std::set<std::string> kVisibility = {"hidden", "after_due_date", "after_published", "visible"};

bool is(const Value& v, const std::string& key, Value::Type type) { return v.has(key) && v.at(key).type == type; }

// The schema check: every key known and of its type, the enumerations' values, a score per test.
void expect_gradescope_schema(const Value& doc) {
  BOOST_TEST_REQUIRE(doc.type == Value::Object);
  for (const auto& field : doc.fields) BOOST_TEST(kTopKeys.count(field.first) == 1u, "unknown key " << field.first);
  BOOST_TEST(is(doc, "score", Value::Number));  // required: no test carries the whole score alone
  for (const char* key : {"execution_time"}) BOOST_TEST((!doc.has(key) || is(doc, key, Value::Number)), key);
  for (const char* key : {"output", "output_format", "visibility", "stdout_visibility"}) {
    BOOST_TEST((!doc.has(key) || is(doc, key, Value::String)), key);
  }
  if (doc.has("output_format")) BOOST_TEST(kFormats.count(doc.at("output_format").text) == 1u);
  for (const char* key : {"visibility", "stdout_visibility"}) {
    if (doc.has(key)) BOOST_TEST(kVisibility.count(doc.at(key).text) == 1u, key);
  }
  if (doc.has("extra_data")) BOOST_TEST(doc.at("extra_data").type == Value::Object);
  BOOST_TEST_REQUIRE(is(doc, "tests", Value::Array));
  for (const Value& t : doc.at("tests").items) {
    for (const auto& field : t.fields) BOOST_TEST(kTestKeys.count(field.first) == 1u, "unknown test key " << field.first);
    for (const char* key : {"score", "max_score"}) BOOST_TEST(is(t, key, Value::Number), key);
    for (const char* key : {"name", "output", "status", "visibility"}) BOOST_TEST(is(t, key, Value::String), key);
    BOOST_TEST((t.at("status").text == "passed" || t.at("status").text == "failed"));
    BOOST_TEST(kVisibility.count(t.at("visibility").text) == 1u);
  }
}

Run shell(const std::string& command) { return cli_test::run_shell(command, scratch()); }

// The Gradescope zip for softmax, written once and unpacked into scratch()/autograder/source.
fs::path pack() {
  const fs::path zip = scratch() / "softmax-gradescope.zip";
  if (!fs::exists(zip)) {
    const Run r = cli_test::run("grade --pack gradescope --exercise softmax --out " + quote(zip.string()));
    BOOST_TEST_REQUIRE(r.status == 0, r.out << r.err);
    BOOST_TEST(has(r.out, "softmax-gradescope.zip"));
  }
  return zip;
}

fs::path unpacked() {
  const fs::path source = scratch() / "autograder" / "source";
  if (!fs::exists(source)) {
    fs::create_directories(source.parent_path());
    const Run r = shell("unzip -q " + quote(pack().string()) + " -d " + quote(source.string()));
    BOOST_TEST_REQUIRE(r.status == 0, r.err);
  }
  return source;
}

// A grader that logs each run into runs.log, then runs the build's: run_autograder's AUTOGRAD_PROGRAM.
fs::path counting_grader() {
  const fs::path p = scratch() / "counting_autograd";
  if (!fs::exists(p)) {
    std::ofstream(p) << "#!/bin/sh\necho run >> " << quote((scratch() / "runs.log").string()) << "\nexec "
                     << quote(AUTOGRAD_CLI) << " \"$@\"\n";
    fs::permissions(p, fs::perms::owner_all);
  }
  return p;
}

struct Graded {
  Run run;
  Value results;
  std::string text;  // results.json as written
  int grader_runs = 0;
};

// /autograder/submission filled by `fill`, then run_autograder, as Gradescope runs it.
template <class Fill>
Graded run_autograder(Fill fill, const std::string& env = "") {
  const fs::path root = scratch() / "autograder";
  unpacked();
  fs::remove_all(root / "submission");
  fs::remove_all(root / "results");
  fs::remove(scratch() / "runs.log");
  fs::create_directories(root / "submission");
  fill(root / "submission");
  Graded g;
  g.run = shell("AUTOGRAD_AUTOGRADER_ROOT=" + quote(root.string()) + " AUTOGRAD_PROGRAM=" +
                quote(counting_grader().string()) + " " + env + " " + quote((root / "source" / "run_autograder").string()));
  BOOST_TEST_REQUIRE(g.run.status == 0, g.run.out << g.run.err);
  g.text = slurp(root / "results" / "results.json");
  try {
    g.results = json_read::parse(g.text);
  } catch (const std::exception& e) {
    BOOST_FAIL("results.json is not JSON: " << e.what() << "\n" << g.text);
  }
  std::ifstream log(scratch() / "runs.log");
  for (std::string line; std::getline(log, line);) ++g.grader_runs;
  BOOST_TEST(!fs::exists(root / "results" / "results.json.part"));
  expect_gradescope_schema(g.results);
  return g;
}

auto one_file(const std::string& name, const std::string& text) {
  return [=](const fs::path& dir) { std::ofstream(dir / name) << text; };
}

std::string load_average() { return slurp("/proc/loadavg").substr(0, 14); }

}  // namespace

BOOST_AUTO_TEST_CASE(the_zip_holds_the_scripts_the_exercise_and_the_source_without_the_instructors_files) {
  const Run listing = shell("unzip -Z " + quote(pack().string()));  // zipinfo: modes and names
  BOOST_TEST_REQUIRE(listing.status == 0, listing.err);
  BOOST_TEST(shell("unzip -tq " + quote(pack().string())).status == 0);  // every CRC checked by another reader
  const std::string& z = listing.out;
  BOOST_TEST(has(z, "-rwxr-xr-x") );
  for (const char* name : {" setup.sh\n", " run_autograder\n", " exercise.txt\n", " course/assignments/softmax/exercise.spec\n",
                           " course/assignments/softmax/adapter.cpp\n", " course/assignments/kit/child_main.cpp\n",
                           " autograd/CMakeLists.txt\n", " autograd/cmake/run.sh\n", " autograd/ops/softmax.cpp\n"}) {
    BOOST_TEST(has(z, name), name);
  }
  for (const char* name : {"solutions/", "notebooks/answers/", "/.git", "CMakeCache.txt", "autograd/build/"}) {
    BOOST_TEST(!has(z, name), name);
  }
  BOOST_TEST(has(slurp(unpacked() / "exercise.txt"), "softmax"));
  std::istringstream lines(z);
  for (std::string line; std::getline(lines, line);) {
    if (has(line, " setup.sh") || has(line, " run_autograder")) BOOST_TEST(line.rfind("-rwxr-xr-x", 0) == 0u, line);
  }
  // setup.sh builds a portable grader, from the packages cmake/run.sh names.
  const std::string setup = slurp(unpacked() / "setup.sh");
  BOOST_TEST(has(setup, "-DAUTOGRAD_NATIVE=OFF"));
  BOOST_TEST(has(setup, "run.sh\" packages"));
}

BOOST_AUTO_TEST_CASE(run_autograder_grades_a_right_a_wrong_and_a_broken_submission_in_one_run_each) {
  const std::string sandbox = bwrap_starts() ? "bwrap" : "user (";
  struct Want {
    const char* what;
    std::string text;
    double score;
    const char* status;
  };
  for (const Want& w : {Want{"right", kHead + kRight, 5, "graded"}, Want{"wrong", kHead + kWrong, 0, "graded"},
                        Want{"broken", kHead + kBroken, 0, "does not compile"}}) {
    const Graded g = run_autograder(one_file("softmax.cpp", w.text));
    BOOST_TEST_MESSAGE(w.what << ": " << g.run.seconds << " s for run_autograder (load " << load_average() << ")");
    BOOST_TEST(g.grader_runs == 1, w.what);
    BOOST_TEST(g.results.at("score").number == w.score, w.what);
    BOOST_TEST(g.results.at("extra_data").at("status").text == w.status, w.what);
    BOOST_TEST(g.results.at("extra_data").at("sandbox").text.rfind(sandbox, 0) == 0u, w.what);
    BOOST_TEST(g.results.at("tests").items.size() == 5u, w.what);
    BOOST_TEST(has(g.run.out, "--sandbox " + std::string(bwrap_starts() ? "bwrap" : "user")), w.what);
  }
}

BOOST_AUTO_TEST_CASE(without_bwrap_run_autograder_grades_as_its_own_user_never_unisolated) {
  const Graded g = run_autograder(one_file("softmax.cpp", kHead + kRight), "AUTOGRAD_BWRAP=/bin/false");
  BOOST_TEST(g.grader_runs == 1);
  BOOST_TEST(g.results.at("score").number == 5);
  BOOST_TEST(g.results.at("extra_data").at("sandbox").text.rfind("user (", 0) == 0u, g.results.at("extra_data").at("sandbox").text);
  BOOST_TEST(has(g.results.at("output").text, "sandbox: user"));
  BOOST_TEST(!has(g.text, "NOT isolated"));
  // The pack is root's alone while a submission runs as another user.
  BOOST_TEST(int(fs::status(unpacked()).permissions() & fs::perms::others_all) == 0);
}

BOOST_AUTO_TEST_CASE(a_submission_folder_without_one_cpp_gets_one_results_json_with_score_0_and_the_reason) {
  const Graded empty = run_autograder([](const fs::path& dir) { std::ofstream(dir / "notes.txt") << "hello\n"; });
  BOOST_TEST(empty.results.at("score").number == 0);
  BOOST_TEST(empty.results.at("extra_data").at("status").text == "refused");
  BOOST_TEST(has(empty.results.at("output").text, "no .cpp file in the folder"), empty.text);
  BOOST_TEST(empty.grader_runs == 1);

  const Graded two = run_autograder([](const fs::path& dir) {
    std::ofstream(dir / "a.cpp") << kHead << kRight;
    std::ofstream(dir / "b.cpp") << kHead << kRight;
  });
  BOOST_TEST(two.results.at("score").number == 0);
  BOOST_TEST(has(two.results.at("output").text, "2 .cpp files and none named softmax.cpp"), two.text);

  // With one of them named for the exercise, that one is graded.
  const Graded named = run_autograder([](const fs::path& dir) {
    std::ofstream(dir / "softmax.cpp") << kHead << kRight;
    std::ofstream(dir / "helper.cpp") << "int x;\n";
  });
  BOOST_TEST(named.results.at("score").number == 5);

  const Graded link = run_autograder([](const fs::path& dir) { fs::create_symlink("/etc/passwd", dir / "softmax.cpp"); });
  BOOST_TEST(link.results.at("score").number == 0);
  BOOST_TEST(has(link.results.at("output").text, "symbolic link"), link.text);

  // A hostile name: ESC, a newline, a quote and a shell's $( ), graded and escaped, never run.
  const std::string hostile = "x\x1b[2J\n\"$(touch pwned)\".cpp";
  const Graded odd = run_autograder(one_file(hostile, kHead + kRight));
  BOOST_TEST(odd.results.at("score").number == 5, odd.text);
  BOOST_TEST(odd.text.find('\x1b') == std::string::npos);
  BOOST_TEST(has(odd.run.out, "x\\x1b[2J\\x0a\"$(touch pwned)\".cpp"), odd.run.out);  // the banner, to the instructors
  BOOST_TEST(odd.run.out.find('\x1b') == std::string::npos);
  // The same name on a link: refused, and the reason names it escaped in results.json.
  const Graded odd_link = run_autograder([&](const fs::path& dir) { fs::create_symlink("/etc/passwd", dir / hostile); });
  BOOST_TEST(odd_link.results.at("score").number == 0);
  BOOST_TEST(odd_link.text.find('\x1b') == std::string::npos);
  BOOST_TEST(has(odd_link.results.at("output").text, "x\\x1b[2J\\x0a"), odd_link.text);
  BOOST_TEST(!fs::exists(scratch() / "pwned"));
  BOOST_TEST(!fs::exists(scratch() / "autograder" / "pwned"));
}

BOOST_AUTO_TEST_CASE(when_the_grader_cannot_grade_results_json_says_so_and_scores_0) {
  const Graded g = run_autograder(one_file("softmax.cpp", kHead + kRight), "AUTOGRAD_PROGRAM=/nonexistent/autograd");
  BOOST_TEST(g.results.at("score").number == 0);
  BOOST_TEST(g.results.at("extra_data").at("status").text == "grader error");
  BOOST_TEST(has(g.results.at("output").text, "could not grade"));
  BOOST_TEST(g.grader_runs == 0);
}

BOOST_AUTO_TEST_CASE(bad_pack_options_are_one_line_and_write_nothing) {
  const fs::path out = scratch() / "out";
  fs::create_directories(out / "a_folder");
  const Run misspelt = cli_test::run("grade --pack gradescope --exercise softmx --out " + quote((out / "x.zip").string()));
  BOOST_TEST(misspelt.status == 2);
  BOOST_TEST(has(misspelt.err, "no exercise 'softmx'"), misspelt.err);
  BOOST_TEST(has(misspelt.err, "(did you mean softmax?)"), misspelt.err);
  BOOST_TEST(std::count(misspelt.err.begin(), misspelt.err.end(), '\n') == 1);

  const Run folder = cli_test::run("grade --pack gradescope --exercise softmax --out " + quote((out / "a_folder").string()));
  BOOST_TEST(folder.status == 2);
  BOOST_TEST(has(folder.err, "a_folder"), folder.err);
  BOOST_TEST(fs::is_directory(out / "a_folder"));
  BOOST_TEST(fs::is_empty(out / "a_folder"));

  for (const std::string& args : {std::string("--pack gradescope --exercise softmax"), std::string("--pack moodle --exercise softmax --out y.zip"),
                                  std::string("--pack gradescope --out y.zip"), std::string("x.cpp --pack gradescope --exercise softmax --out y.zip"),
                                  std::string("--student-pack s --exercise softmax"), std::string("a_folder")}) {
    const Run r = cli_test::run("grade " + args, "", out);
    BOOST_TEST(r.status == 2, args);
    BOOST_TEST(std::count(r.err.begin(), r.err.end(), '\n') == 1, args << ": " << r.err);
  }
  // Nothing written beside them: no zip, no temporary file.
  std::size_t entries = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(out)) entries += e.path().filename() != "a_folder";
  BOOST_TEST(entries == 0u);
}

BOOST_AUTO_TEST_CASE(the_student_pack_leaves_out_solutions_lesson_answers_and_hidden_cases) {
  const fs::path dir = scratch() / "students";
  const Run r = cli_test::run("grade --student-pack " + quote(dir.string()));
  BOOST_TEST_REQUIRE(r.status == 0, r.out << r.err);
  BOOST_TEST(fs::is_regular_file(dir / "assignments" / "softmax" / "softmax.cpp"));
  BOOST_TEST(fs::is_regular_file(dir / "assignments" / "softmax" / "statement.md"));
  BOOST_TEST(fs::is_regular_file(dir / "CMakeLists.txt"));
  BOOST_TEST(!fs::exists(dir / "assignments" / "solutions"));
  BOOST_TEST(!fs::exists(dir / "notebooks" / "answers"));
  BOOST_TEST(fs::is_regular_file(dir / "notebooks" / "01_tape.cpp"));
  // A second time into the same folder is refused, and the first pack is kept.
  const Run again = cli_test::run("grade --student-pack " + quote(dir.string()));
  BOOST_TEST(again.status == 2);
  BOOST_TEST(has(again.err, "already exists"));
  BOOST_TEST(fs::is_regular_file(dir / "CMakeLists.txt"));
}

BOOST_AUTO_TEST_CASE(a_spec_without_its_hidden_cases_keeps_the_visible_ones_and_still_reads) {
  const std::string spec = slurp(fs::path(AUTOGRAD_SOURCE_DIR) / "assignments" / "softmax" / "exercise.spec") +
                           "points = dx 2\nhidden = 2\n";
  const std::string visible = grading::visible_spec(spec, "softmax/exercise.spec");
  BOOST_TEST(!has(visible, "hidden"));
  BOOST_TEST(!has(visible, "one row 1x6"));
  BOOST_TEST(!has(visible, "large logits"));
  BOOST_TEST(has(visible, "random 3x5"));
  BOOST_TEST(has(visible, "square 4x4"));
  BOOST_TEST(has(visible, "points = dx 2"));
  // It reads as a spec of two cases.
  const fs::path folder = scratch() / "spec" / "softmax";
  fs::create_directories(folder);
  fs::copy(fs::path(AUTOGRAD_SOURCE_DIR) / "assignments" / "softmax", folder, fs::copy_options::overwrite_existing);
  std::ofstream(folder / "exercise.spec") << visible;
  const kit::ExerciseSpec read = kit::read_spec(folder.string());
  BOOST_TEST(read.cases.size() == 2u);
  BOOST_TEST(read.hidden == 0u);
  // Every case hidden leaves nothing to self-check: refused, naming the file.
  BOOST_CHECK_EXCEPTION(grading::visible_spec(spec + "hidden = 4\n", "softmax/exercise.spec"), ag::DataError,
                        [](const ag::DataError& e) { return has(e.what(), "softmax/exercise.spec: every case is hidden"); });
  BOOST_CHECK_THROW(grading::visible_spec(spec + "hidden = two\n", "softmax/exercise.spec"), ag::DataError);
}
