// What issue 37 found an instructor could not trust: isolation lost without a
// word (a bwrap that cannot start graded anyway, or exited 2 as if the usage
// were wrong), and students' file and folder names reaching the terminal with
// their C1 controls and invalid UTF-8. $AUTOGRAD_BWRAP points the grader at a
// bwrap that fails (/bin/false), as on a machine without user namespaces.
#define BOOST_TEST_MODULE cli_grade_trust
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "cli_grade.h"

using namespace cli_grade;

BOOST_TEST_GLOBAL_FIXTURE(Scratch);

namespace {

const std::string kNoBwrap = "AUTOGRAD_BWRAP=/bin/false";

// The grader's refusal: exit 3, one line on stderr saying why and what to do, no score.
void expect_refusal(const Run& r, const std::string& why) {
  BOOST_TEST(r.status == 3, r.out << r.err);
  BOOST_TEST(std::count(r.err.begin(), r.err.end(), '\n') == 1, r.err);
  BOOST_TEST(has(r.err, why), r.err);
  BOOST_TEST(has(r.err, "install bubblewrap"), r.err);
  BOOST_TEST(has(r.err, "or pass --sandbox none to grade without isolation"), r.err);
  BOOST_TEST(!has(r.out, "score:"), r.out);
}

// A C1 control or a byte that is not valid UTF-8 (here: 0xc2 0x80-0x9f, 0xfe, 0xff) left raw.
bool has_raw_c1_or_invalid(const std::string& s) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == 0xfe || c == 0xff) return true;
    if (c == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) < 0xa0) return true;
  }
  return false;
}

// Column `name` of a CSV, by file, where the fields up to it hold no comma, quote or newline.
std::map<std::string, std::string> column(const std::string& table, const std::string& name) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(table);
  for (std::string line; std::getline(lines, line);) {
    rows.emplace_back();
    std::istringstream fields(line);
    for (std::string f; std::getline(fields, f, ',');) rows.back().push_back(f);
  }
  std::map<std::string, std::string> by_file;
  if (rows.empty()) return by_file;
  const auto at = std::find(rows[0].begin(), rows[0].end(), name);
  if (at == rows[0].end()) return by_file;
  const std::size_t i = std::size_t(at - rows[0].begin());
  for (std::size_t r = 1; r < rows.size(); ++r) {  // a quoted field after it may hold a newline: not a row
    const std::string& file = rows[r].empty() ? "" : rows[r][0];
    if (rows[r].size() > i && file.size() > 4 && file.compare(file.size() - 4, 4, ".cpp") == 0) by_file[file] = rows[r][i];
  }
  return by_file;
}

// What a terminal shows of `--csv` when it names one: a pseudo-terminal's slave, read from its master.
struct Terminal {
  int master = ::posix_openpt(O_RDWR | O_NOCTTY);
  std::string name = master >= 0 && ::grantpt(master) == 0 && ::unlockpt(master) == 0 ? ::ptsname(master) : "";
  int slave = name.empty() ? -1 : ::open(name.c_str(), O_RDWR | O_NOCTTY);  // kept open: what was written stays readable
  ~Terminal() {
    ::close(slave);
    ::close(master);
  }
  std::string read_all() const {
    ::fcntl(master, F_SETFL, ::fcntl(master, F_GETFL) | O_NONBLOCK);
    std::string out;
    char buffer[4096];
    for (ssize_t n; (n = ::read(master, buffer, sizeof buffer)) > 0;) out.append(buffer, std::size_t(n));
    return out;
  }
};

}  // namespace

// Issue 37: `--sandbox bwrap` that could not start exited 2, "bad usage".
BOOST_AUTO_TEST_CASE(a_bwrap_that_cannot_start_is_the_graders_error_exit_3) {
  const fs::path file = write("right.cpp", kHead + kRight);
  expect_refusal(grade("--sandbox bwrap " + quote(file.string()), kNoBwrap),
                 "--sandbox bwrap needs a sandbox, and bwrap (/bin/false) cannot start here: it exited with status 1");
  expect_refusal(grade("--sandbox bwrap " + quote(file.string()), "AUTOGRAD_BWRAP=/nonexistent/bwrap"),
                 "bwrap (/nonexistent/bwrap) cannot start here");
}

// Issue 37: the default, --sandbox auto, graded without isolation when bwrap could not start.
BOOST_AUTO_TEST_CASE(the_default_refuses_to_grade_without_isolation) {
  const fs::path file = write("right.cpp", kHead + kRight);
  const fs::path caller = scratch() / "caller";
  expect_refusal(cli_test::run("grade " + quote(file.string()), kNoBwrap, caller),
                 "--sandbox auto needs a sandbox, and bwrap (/bin/false) cannot start here");
  const fs::path csv = scratch() / "refused.csv";
  const Run all = cli_test::run("grade --class " + quote(file.parent_path().string()) + " --exercise softmax --csv " +
                                quote(csv.string()), kNoBwrap, caller);
  expect_refusal(all, "--sandbox auto needs a sandbox");
  BOOST_TEST(!fs::exists(csv));
}

// Grading without isolation is asked for by name, and then the banner and every CSV row say so.
BOOST_AUTO_TEST_CASE(sandbox_none_grades_and_the_banner_and_the_csv_say_so) {
  write("bare/right.cpp", kHead + kRight);
  const fs::path csv = scratch() / "bare.csv";
  const Run r = grade("--sandbox none --timeout 30 --class " + quote((scratch() / "src" / "bare").string()) +
                      " --exercise softmax --csv " + quote(csv.string()), kNoBwrap);
  BOOST_TEST_REQUIRE(r.status == 0, r.out << r.err);
  BOOST_TEST(has(r.out, "sandbox: none (--sandbox none)"), r.out);
  BOOST_TEST(has(r.out, "NOT isolated"), r.out);
  const std::string table = slurp(csv);
  BOOST_TEST(column(table, "sandbox")["right.cpp"] == "none (NOT isolated: --sandbox none" + totals_note() + ")", table);
}

// Issue 37: where no control group can be made, the default graded anyway, the totals only
// announced as not bounded. AUTOGRAD_CGROUP_ROOT at a missing folder is such a machine.
BOOST_AUTO_TEST_CASE(the_default_refuses_where_the_totals_cannot_be_bounded) {
  if (!bwrap_starts()) {
    BOOST_TEST_MESSAGE("bwrap cannot start here: the default refuses for that first (the case above)");
    return;
  }
  const std::string no_cgroups = "AUTOGRAD_CGROUP_ROOT=" + quote((scratch() / "no-cgroups").string());
  const fs::path file = write("right.cpp", kHead + kRight);
  const Run r = grade("--sandbox auto " + quote(file.string()), no_cgroups);
  BOOST_TEST(r.status == 3, r.out << r.err);
  BOOST_TEST(std::count(r.err.begin(), r.err.end(), '\n') == 1, r.err);
  BOOST_TEST(has(r.err, "--sandbox auto needs the totals bounded, and no control group can be made here"), r.err);
  BOOST_TEST(has(r.err, "or pass --sandbox bwrap to grade in bwrap with the totals NOT bounded"), r.err);
  BOOST_TEST(!has(r.out, "score:"), r.out);
  // Asked for by name, bwrap grades, and the banner and the report say what is not bounded.
  const Run named = grade("--sandbox bwrap --format json " + quote(file.string()), no_cgroups);
  BOOST_TEST_REQUIRE(named.status == 0, named.out << named.err);
  BOOST_TEST(has(named.out, "\"sandbox\": \"bwrap (totals NOT bounded)\""), named.out);
  const Run text = grade("--sandbox bwrap " + quote(file.string()), no_cgroups);
  BOOST_TEST(has(text.out, "totals NOT bounded here (no cgroup can be made under"), text.out);
  BOOST_TEST(has(text.out, "score: 5/5"), text.out);
}

// Issue 37: a CSI (U+009B) or OSC (U+009D) in a file or folder name reached the instructor's terminal raw.
// The FIFO and the folders without a .cpp are refused rows: nothing of theirs is built.
BOOST_AUTO_TEST_CASE(c1_controls_and_invalid_utf8_in_names_are_escaped_where_printed) {
  const std::string csi = "csi\xc2\x9b" "31m", osc = "osc\xc2\x9d" "0;owned\x07", bad = "bad\xff\xfe";
  const fs::path dir = scratch() / "names";
  fs::create_directories(dir / osc);
  fs::create_directories(dir / bad);
  fs::create_directories(dir / "Jos\xc3\xa9");  // valid UTF-8 stays as it is
  BOOST_TEST_REQUIRE(::mkfifo((dir / (csi + ".cpp")).c_str(), 0644) == 0);
  const std::string escaped[] = {"csi\\xc2\\x9b31m.cpp", "osc\\xc2\\x9d0;owned\\x07", "bad\\xff\\xfe", "Jos\xc3\xa9"};
  const fs::path csv = scratch() / "names.csv";
  const std::string args = "--exercise softmax --class " + quote(dir.string()) + " --csv ";
  const Run r = grade(args + quote(csv.string()));
  BOOST_TEST_REQUIRE(r.status == 0, r.out << r.err);
  BOOST_TEST(!has_raw_c1_or_invalid(r.out), r.out);
  for (const std::string& e : escaped) BOOST_TEST(has(r.out, e), e << " in\n" << r.out);
  BOOST_TEST(has(slurp(csv), csi + ".cpp"));  // a CSV file keeps the names exactly (class tests: the round trip)
  Terminal tty;
  BOOST_TEST_REQUIRE(tty.slave >= 0);
  const Run shown = grade(args + quote(tty.name));
  BOOST_TEST_REQUIRE(shown.status == 0, shown.out << shown.err);
  const std::string screen = tty.read_all();
  BOOST_TEST(has(screen, "file,status"), screen);
  BOOST_TEST(!has_raw_c1_or_invalid(screen), screen);
  for (const std::string& e : escaped) BOOST_TEST(has(screen, e), e << " in\n" << screen);
  const Run one = grade(quote(write("x\xc2\x9b" "2J\xff.cpp", "// exercise: softmax\nnot C++\n").string()));
  BOOST_TEST(one.status == 1, one.out << one.err);
  BOOST_TEST(!has_raw_c1_or_invalid(one.out), one.out);
  BOOST_TEST(has(one.out, "x\\xc2\\x9b2J\\xff.cpp"), one.out);
}

// Issue 37: without --seed, the seed each student got was recorded nowhere but the text report.
BOOST_AUTO_TEST_CASE(every_output_records_the_seed) {
  write("seeds/right.cpp", kHead + kRight);
  write("seeds/broken.cpp", kHead + "not C++\n");
  const std::string dir = quote((scratch() / "src" / "seeds").string());
  const fs::path csv = scratch() / "seeds.csv";
  const Run fresh = grade("--timeout 30 --exercise softmax --class " + dir + " --csv " + quote(csv.string()));
  BOOST_TEST_REQUIRE(fresh.status == 0, fresh.out << fresh.err);
  const std::map<std::string, std::string> seeds = column(slurp(csv), "seed");
  BOOST_TEST_REQUIRE(seeds.size() == 2u, slurp(csv));
  for (const auto& [file, seed] : seeds) {
    BOOST_TEST((!seed.empty() && seed.find_first_not_of("0123456789") == std::string::npos), file << ": " << seed);
  }
  const Run again = grade("--timeout 30 --seed " + seeds.at("right.cpp") + " --exercise softmax --class " + dir +
                          " --csv " + quote(csv.string()));
  BOOST_TEST_REQUIRE(again.status == 0, again.out << again.err);
  BOOST_TEST(column(slurp(csv), "seed")["right.cpp"] == seeds.at("right.cpp"));
  BOOST_TEST(column(slurp(csv), "seed")["broken.cpp"] == seeds.at("right.cpp"));
  const Run one = grade("--seed 4242 " + quote((scratch() / "src" / "seeds" / "broken.cpp").string()));
  BOOST_TEST(one.status == 1, one.out << one.err);
  BOOST_TEST(has(one.out, "seed 4242"), one.out);
}
