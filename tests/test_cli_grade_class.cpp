// `autograd grade --class`: a folder with a correct, a wrong, a cheating, a
// broken and a hostile-named submission, and a student folder, graded into a
// CSV that a spreadsheet reads back exactly, a feedback file per student and the
// class's mistakes (a table, and a chart drawn by gnuplot); and "Adding an exercise" from
// assignments/README.md, followed step by step in a temporary copy.
#define BOOST_TEST_MODULE cli_grade_class
#include <boost/test/unit_test.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

#include "cli_grade.h"  // sandbox_option
#include "cli_run.h"

namespace fs = std::filesystem;
using cli_test::has;
using cli_test::quote;
using cli_test::slurp;

namespace {

// A scratch folder per test process, made and removed by a global fixture (a
// function-local static path would be destroyed before a global's destructor ran).
fs::path scratch() { return fs::temp_directory_path() / ("ag_cli_grade_class_" + std::to_string(::getpid())); }

struct Scratch {
  Scratch() {
    fs::remove_all(scratch());
    fs::create_directories(scratch());
  }
  ~Scratch() { fs::remove_all(scratch()); }
};

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

// "grade ", and --sandbox none where bwrap cannot start (cli_grade.h): these tests are not about the sandbox.
std::string grade() { return "grade " + cli_grade::sandbox_option(""); }

// RFC 4180: fields split at commas, quoted fields may hold commas, "" and newlines.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1, std::vector<std::string>(1));
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    std::string& field = rows.back().back();
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') field += '"', ++i;
      else if (c == '"') quoted = false;
      else field += c;
    } else if (c == '"') quoted = true;
    else if (c == ',') rows.back().emplace_back();
    else if (c == '\n') rows.emplace_back(1);
    else field += c;
  }
  if (rows.back().size() == 1 && rows.back()[0].empty()) rows.pop_back();
  return rows;
}

const std::string kHead = "#include <cstdio>\n#include <unistd.h>\n#include \"assignments/softmax/softmax.h\"\n";
const std::string kRight = "arma::mat softmax_backward(const arma::mat& y, const arma::mat& dy) {\n"
                           "  const arma::vec s = arma::sum(dy % y, 1);\n  return y % (dy.each_col() - s);\n}\n";

// Issue 37: a feedback file per student beside the CSV, each named for its student and
// inside the folder, with only harmless text in it.
void check_feedback(const fs::path& folder) {
  std::set<std::string> files;
  for (const fs::directory_entry& e : fs::directory_iterator(folder)) files.insert(e.path().filename().string());
  const std::set<std::string> names = {"right.cpp.txt", "twice.cpp.txt", "cheat.cpp.txt", "broken.cpp.txt",
                                          "alice.txt", "link.cpp.txt", "evil, \"quoted\"\\x0aname.cpp.txt"};
  BOOST_TEST((files == names), [&] { std::string s; for (const std::string& f : files) s += f + " | "; return s; }());
  for (const std::string& f : files) {
    const std::string text = slurp(folder / f);
    BOOST_TEST(text.find_first_of("\x1b\r") == std::string::npos, f);
    BOOST_TEST(has(text, "inputs drawn with seed "), f << ":\n" << text);
  }
  const std::string twice = slurp(folder / "twice.cpp.txt");
  BOOST_TEST(has(twice, "  | debug \\x1b[2J \\xc2\\x9b \\xff\n"), twice);  // its own output, escaped
  BOOST_TEST(twice.find_first_of("\xc2\xff") == std::string::npos, twice);
  BOOST_TEST(has(twice, "random 3x5, dx: constant factor 2 (0/1)"), twice);
  BOOST_TEST(has(twice, "hint: Off by a constant factor: yours = 2 x expected"), twice);
  BOOST_TEST(has(twice, "mistakes: constant factor 2"), twice);
  // The two numbers at the element furthest off: yours is twice the expected one.
  const std::size_t at = twice.find("(counting from 0): expected ");
  BOOST_TEST_REQUIRE(at != std::string::npos, twice);
  double expected = 0, yours = 0;
  BOOST_TEST_REQUIRE(std::sscanf(twice.c_str() + at, "(counting from 0): expected %lf, yours %lf", &expected, &yours) == 2);
  BOOST_TEST(expected != 0);
  BOOST_TEST(yours == 2 * expected, boost::test_tools::tolerance(1e-12));
  const std::string broken = slurp(folder / "broken.cpp.txt");
  BOOST_TEST(has(broken, "result: does not compile, 0/"), broken);
  BOOST_TEST(has(broken, "The compiler said:\n  | "), broken);
  BOOST_TEST(has(broken, "error"), broken);
  BOOST_TEST(has(slurp(folder / "cheat.cpp.txt"), "expected 'autograd-answer', got 'score:'"));
  BOOST_TEST(has(slurp(folder / "link.cpp.txt"), "symbolic link"));
  BOOST_TEST(has(slurp(folder / "alice.txt"), "Feedback on alice/softmax.cpp"));
  BOOST_TEST(has(slurp(folder / "alice.txt"), "mistakes: none"));
  BOOST_TEST(has(slurp(folder / ("evil, \"quoted\"\\x0aname.cpp.txt")), "Feedback on evil, \"quoted\"\\x0aname.cpp"));
}

// Issue 37: the class's mistakes counted, printed at the end of the run, written as a table and drawn by gnuplot.
void check_mistakes(const fs::path& out, const std::string& printed) {
  const std::string table = slurp(out / "scores.mistakes.txt");
  BOOST_TEST(has(printed, table), printed);
  BOOST_TEST(has(table, "7 submissions, 3 with full marks"), table);
  for (const char* row : {"constant factor 2  twice.cpp", "does not compile   broken.cpp",
                                 "malformed answer   cheat.cpp", "refused            link.cpp"}) {
    BOOST_TEST(has(table, std::string("  1         ") + row + "\n"), row << "\n" << table);
  }
  BOOST_TEST(has(printed, "feedback for each student in "), printed);
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) return;  // the test without gnuplot is below
  const std::string png = slurp(out / "scores.mistakes.png");
  BOOST_TEST(png.substr(0, 8) == std::string("\x89PNG\r\n\x1a\n", 8));
  BOOST_TEST(png.size() > 5000u);  // a drawing, not an empty frame
  BOOST_TEST(has(printed, "the mistakes charted in "), printed);
}

}  // namespace

BOOST_TEST_GLOBAL_FIXTURE(Scratch);

BOOST_AUTO_TEST_CASE(a_class_folder_becomes_one_csv_row_per_submission) {
  const fs::path dir = scratch() / "class";
  const std::string hostile = "evil, \"quoted\"\nname.cpp";
  write(dir / "right.cpp", kHead + kRight);
  // It also prints an ESC, a C1 control (CSI) and a byte that is not UTF-8: its feedback file shows them escaped.
  write(dir / "twice.cpp", kHead + "arma::mat softmax_backward(const arma::mat& y, const arma::mat& dy) {\n"
                                   "  std::fputs(\"debug \\x1b[2J \\xc2\\x9b \\xff\\n\", stderr);\n"
                                   "  const arma::vec s = arma::sum(dy % y, 1);\n  return 2 * y % (dy.each_col() - s);\n}\n");
  write(dir / "cheat.cpp", kHead + "static int c = [] { std::printf(\"score: 5/5 (100%%)\\n\"); std::fflush(stdout);"
                                   " _exit(0); return 0; }();\n" + kRight);
  write(dir / "broken.cpp", kHead + "this is not C++\n");
  write(dir / hostile, kHead + kRight);
  write(dir / "alice" / "softmax.cpp", kHead + kRight);
  write(dir / "notes.txt", "not a submission\n");
  fs::create_symlink(std::string(AUTOGRAD_SOURCE_DIR) + "/assignments/softmax/softmax.cpp", dir / "link.cpp");
  const fs::path csv = scratch() / "scores.csv";
  const cli_test::Run r = cli_test::run(grade() + "--class " + quote(dir.string()) + " --exercise softmax --csv " +
                                        quote(csv.string()) + " --jobs 2 --timeout 30");  // generous: a correct run takes well under 1 s idle
  BOOST_TEST_REQUIRE(r.status == 0, r.out << r.err);
  const std::vector<std::vector<std::string>> rows = parse_csv(slurp(csv));
  BOOST_TEST_REQUIRE(rows.size() == 8u, slurp(csv));  // the header and 7 submissions
  const std::vector<std::string>& header = rows[0];
  BOOST_TEST(header.front() == "file");
  BOOST_TEST(header[header.size() - 3] == "percent");
  std::map<std::string, std::vector<std::string>> by_file;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    BOOST_TEST(rows[i].size() == header.size(), rows[i][0]);
    by_file[rows[i][0]] = rows[i];
  }
  auto col = [&](const std::string& file, int from_end) { return by_file.at(file).at(header.size() - from_end); };
  BOOST_TEST(col("right.cpp", 3) == "100");
  BOOST_TEST(col("alice/softmax.cpp", 3) == "100");
  BOOST_TEST(col(hostile, 3) == "100");  // the name survives the round trip
  BOOST_TEST(col("twice.cpp", 3) == "0");
  BOOST_TEST(has(col("twice.cpp", 2), "yours = 2 x expected"));
  BOOST_TEST(col("cheat.cpp", 3) == "0");
  BOOST_TEST(by_file.at("cheat.cpp")[1] == "malformed answer");
  BOOST_TEST(has(col("cheat.cpp", 1), "expected 'autograd-answer', got 'score:'"));
  BOOST_TEST(by_file.at("broken.cpp")[1] == "does not compile");
  BOOST_TEST(by_file.at("link.cpp")[1] == "refused");
  BOOST_TEST(has(col("link.cpp", 1), "symbolic link"));
  BOOST_TEST(has(r.out, "submission"));  // the summary table
  BOOST_TEST(has(r.out, "evil, \"quoted\"\\x0aname.cpp"));  // one line per submission, even for this name
  check_feedback(scratch() / "scores.feedback");
  check_mistakes(scratch(), r.out);
}

// assignments/README.md, "Adding an exercise", done in a copy: a folder with a
// spec, a header, an adapter and a stub is found and graded; nothing else changes.
BOOST_AUTO_TEST_CASE(adding_an_exercise_is_one_folder) {
  const fs::path copy = scratch() / "copy" / "assignments";
  fs::create_directories(copy);
  fs::copy(std::string(AUTOGRAD_SOURCE_DIR) + "/assignments/kit", copy / "kit");
  const fs::path ex = copy / "colnorm";
  write(ex / "exercise.spec", "title = BatchNorm backward (training mode)\nforward = batchnorm_composed\neps = 1e-5\n"
                              "input = x N D -2 2\ninput = gamma 1 D 0.5 1.5\ninput = beta 1 D -1 1\n"
                              "sends = x gamma dy eps\ncase = random 5x3 | N=5 D=3\ncase = tall 8x2 | N=8 D=2\n");
  write(ex / "colnorm.h", "#pragma once\n#include <armadillo>\n#include <vector>\n"
                          "std::vector<arma::mat> colnorm_backward(const arma::mat& x, const arma::mat& gamma,"
                          " const arma::mat& dy, double eps);\n");
  write(ex / "adapter.cpp", "#include \"assignments/kit/child.h\"\n#include \"assignments/colnorm/colnorm.h\"\n"
                            "std::vector<arma::mat> kit_child::answer(const std::vector<arma::mat>& s) {\n"
                            "  return colnorm_backward(s.at(0), s.at(1), s.at(2), s.at(3)(0));\n}\n");
  const std::string stub = "#include \"assignments/colnorm/colnorm.h\"\n"
                           "std::vector<arma::mat> colnorm_backward(const arma::mat& x, const arma::mat& gamma,"
                           " const arma::mat& dy, double) {\n"
                           "  return {arma::zeros(arma::size(x)), arma::zeros(arma::size(gamma)), arma::sum(dy, 0)};\n}\n";
  write(ex / "colnorm.cpp", stub);
  const std::string env = "AUTOGRAD_DATA_DIR=" + quote((scratch() / "copy").string());
  const cli_test::Run s = cli_test::run(grade() + quote((ex / "colnorm.cpp").string()), env);
  BOOST_TEST(s.status == 1, s.out << s.err);
  BOOST_TEST(has(s.out, "Grading: BatchNorm backward (training mode)"), s.out);
  BOOST_TEST(has(s.out, "score: 2/7 (28%)"), s.out);  // dbeta right in both cases, all else wrong
  // The cs231n formula, column by column: dx = rstd/N (N dxhat - sum dxhat - xhat sum(dxhat xhat)).
  write(scratch() / "mine" / "colnorm.cpp",
        "#include \"assignments/colnorm/colnorm.h\"\n"
        "std::vector<arma::mat> colnorm_backward(const arma::mat& x, const arma::mat& gamma, const arma::mat& dy,"
        " double eps) {\n"
        "  const double n = double(x.n_rows);\n"
        "  const arma::mat c = x.each_row() - arma::mean(x, 0);\n"
        "  const arma::rowvec rstd = 1.0 / arma::sqrt(arma::mean(arma::square(c), 0) + eps);\n"
        "  const arma::mat xhat = c.each_row() % rstd;\n"
        "  arma::mat dxhat = dy;\n  dxhat.each_row() %= gamma;\n"
        "  arma::mat dx = n * dxhat;\n  dx.each_row() -= arma::sum(dxhat, 0);\n"
        "  dx -= xhat.each_row() % arma::sum(dxhat % xhat, 0);\n"
        "  dx.each_row() %= rstd / n;\n"
        "  return {dx, arma::sum(dy % xhat, 0), arma::sum(dy, 0)};\n}\n");
  const cli_test::Run m = cli_test::run(grade() + "--exercise colnorm " + quote((scratch() / "mine" / "colnorm.cpp").string()), env);
  BOOST_TEST(m.status == 0, m.out << m.err);
  BOOST_TEST(has(m.out, "score: 7/7 (100%)"), m.out);
}

// Issue 37: a broken exercise.spec is a setup error, as an unknown exercise is: exit 2 (it was 1,
// the status of "not full marks"), one line naming the spec's file and line, nothing built.
BOOST_AUTO_TEST_CASE(a_broken_spec_exits_2_naming_its_file_and_line) {
  const fs::path copy = scratch() / "broken" / "assignments";
  fs::create_directories(copy);
  fs::copy(std::string(AUTOGRAD_SOURCE_DIR) + "/assignments/kit", copy / "kit");
  fs::copy(std::string(AUTOGRAD_SOURCE_DIR) + "/assignments/softmax", copy / "softmax");
  const std::string spec = slurp(copy / "softmax" / "exercise.spec");
  const std::string env = "AUTOGRAD_DATA_DIR=" + quote((scratch() / "broken").string());
  const std::pair<std::string, std::string> broken[] = {
      {"kind = backward # the default", ":12: expected kind = backward or jvp"},
      {"tolerance = 0", ":12: expected tolerance = a number above 0"},
      {"hints = sofmax", ":12: unknown hints 'sofmax' (did you mean softmax?)"},
      {"forward = sofmax", ":12: the op table has no row 'sofmax'"},
  };
  for (const auto& [line, want] : broken) {
    write(copy / "softmax" / "exercise.spec", spec + line + "\n");
    const cli_test::Run r = cli_test::run(grade() + quote((copy / "softmax" / "softmax.cpp").string()), env);
    BOOST_TEST(r.status == 2, line << "\n" << r.out << r.err);
    BOOST_TEST(has(r.err, "autograd grade: " + (copy / "softmax" / "exercise.spec").string() + want), r.err);
    BOOST_TEST(r.err.find('\n') == r.err.size() - 1, r.err);  // one line
    BOOST_TEST(!has(r.out, "building"), r.out);
  }
}

// Issue 25: a student folder that is a link, and a .cpp that is a FIFO, were left out without a word.
// Each is now a row that says why, and the FIFO is never opened for a blocking read.
// Run without gnuplot on the PATH (the compiler is named by its full path): one line says the
// chart was not drawn, and the table of mistakes is written all the same.
BOOST_AUTO_TEST_CASE(linked_folders_and_fifos_get_a_row_saying_why) {
  const fs::path dir = scratch() / "odd";
  write(dir / "right.cpp", kHead + kRight);
  write(scratch() / "elsewhere" / "softmax.cpp", kHead + kRight);
  fs::create_directory_symlink(scratch() / "elsewhere", dir / "bob");
  BOOST_TEST_REQUIRE(::mkfifo((dir / "fifo.cpp").c_str(), 0644) == 0);
  fs::create_directories(dir / "carol");
  BOOST_TEST_REQUIRE(::mkfifo((dir / "carol" / "softmax.cpp").c_str(), 0644) == 0);
  fs::create_directories(dir / "dave");
  BOOST_TEST_REQUIRE(::mkfifo((dir / "dave" / "work.cpp").c_str(), 0644) == 0);
  const fs::path csv = scratch() / "odd.csv";
  const cli_test::Run r = cli_test::run(grade() + "--class " + quote(dir.string()) + " --exercise softmax --csv " +
                                        quote(csv.string()) + " --timeout 30",  // generous, for a loaded machine
                                        "PATH=/nonexistent");
  BOOST_TEST_REQUIRE(r.status == 0, r.out << r.err);
  BOOST_TEST(has(r.out, "gnuplot was not found, so " + (scratch() / "odd.mistakes.png").string() + " was not drawn"), r.out);
  BOOST_TEST(!fs::exists(scratch() / "odd.mistakes.png"));
  BOOST_TEST(has(slurp(scratch() / "odd.mistakes.txt"), "  4         refused  bob, carol/softmax.cpp, dave/work.cpp and 1 more\n"),
             slurp(scratch() / "odd.mistakes.txt"));
  const std::vector<std::vector<std::string>> rows = parse_csv(slurp(csv));
  BOOST_TEST_REQUIRE(rows.size() == 6u, slurp(csv));  // the header and 5 rows
  std::map<std::string, std::vector<std::string>> by_file;
  for (std::size_t i = 1; i < rows.size(); ++i) by_file[rows[i][0]] = rows[i];
  BOOST_TEST(by_file.at("right.cpp")[1] == "graded");
  const std::map<std::string, std::string> why = {
      {"bob", "the student folder is a symbolic link"},
      {"fifo.cpp", "is not a regular file"},
      {"carol/softmax.cpp", "carol/softmax.cpp is not a regular file"},
      {"dave/work.cpp", "dave/work.cpp is not a regular file"}};
  for (const auto& [file, reason] : why) {
    BOOST_TEST_REQUIRE(by_file.count(file) == 1u, file << "\n" << slurp(csv));
    BOOST_TEST(by_file.at(file)[1] == "refused", file);
    BOOST_TEST(has(by_file.at(file).back(), reason), file << ": " << by_file.at(file).back());
  }
}
