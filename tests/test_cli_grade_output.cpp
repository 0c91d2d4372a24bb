// What reaches the instructor from `autograd grade`: the child's bytes as
// text (no escape sequence on the terminal, no ESC, CR or NUL in the CSV),
// a stdout flood cut while it is read (the grader's memory stays small with
// four at once), and the grader's own broken environment (a noexec TMPDIR, a
// missing compiler) reported as its error, exit 3, with no score at all.
#define BOOST_TEST_MODULE cli_grade_output
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>

#include <thread>

#include "cli_grade.h"

using namespace cli_grade;

BOOST_TEST_GLOBAL_FIXTURE(Scratch);

namespace {

// (The answer frame is the child's fd 3, a dup of the stdout pipe: kit/child_main.cpp.)
// The hostile bytes of issue 25: clear the line, go back, print a fake report, then hide the rest.
const std::string kHide = "\\x1b[2K\\r\\x1b[1Ascore: 5/5 (100%)\\n\\x1b[8m";

bool has_control_bytes(const std::string& s) {
  for (char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    if ((u < 32 && c != '\n' && c != '\t') || u == 127) return true;
  }
  return false;
}

// The largest resident size, in KiB, the process reached while we watched it (until it exits,
// or until it passes 1 GiB: then it is killed, and the test fails rather than the machine).
long watch_peak_kib(pid_t pid) {
  long peak = 0;
  for (int status = 0; ::waitpid(pid, &status, WNOHANG) == 0;) {
    if (peak > (1L << 20)) ::kill(pid, SIGKILL);
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    for (std::string key; in >> key;) {
      if (key == "VmHWM:") in >> peak;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return peak;
}

}  // namespace

BOOST_AUTO_TEST_CASE(escape_bytes_reach_the_terminal_and_the_csv_as_text) {
  const std::string zeros = "arma::mat softmax_backward(const arma::mat& y, const arma::mat&) {\n"
                            "  std::fprintf(stderr, \"" + kHide + "\");\n  return arma::zeros(arma::size(y));\n}\n";
  // The harness makes a thrown text printable, so this one writes its own frame line (fd 3) with ESC, CR and NUL.
  const std::string thrower = "arma::mat softmax_backward(const arma::mat& y, const arma::mat&) {\n"
                              "  static const char line[] = \"case 0 threw \\x1b[2K\\rall fine\\x01\\0zz\\n\";\n"
                              "  ::write(3, line, sizeof line - 1);\n  ::_exit(0);\n  return y;\n}\n";
  const fs::path one = write("class/zeros.cpp", kHead + zeros);
  write("class/thrower.cpp", kHead + thrower);
  const Run single = grade(quote(one.string()));
  BOOST_TEST(!has_control_bytes(single.out), single.out);
  BOOST_TEST(has(single.out, "\\x1b[2K\\x0d\\x1b[1Ascore: 5/5 (100%)"), single.out);
  BOOST_TEST(percent(single.out) == 0);
  const fs::path csv = scratch() / "scores.csv";
  const Run all = grade("--class " + quote((scratch() / "src" / "class").string()) + " --exercise softmax --csv " +
                        quote(csv.string()));
  BOOST_TEST(all.status == 0, all.out << all.err);
  BOOST_TEST(!has_control_bytes(all.out), all.out);
  const std::string table = slurp(csv);
  BOOST_TEST(!has_control_bytes(table), table);
  BOOST_TEST(has(table, "your backward threw: \\x1b[2K\\x0dall fine\\x01\\x00zz"), table);
}

// The grader's peak resident size, in KiB, grading the folder src/NAME (four submissions at once,
// without the sandbox); its CSV is NAME.csv.
long class_peak_kib(const std::string& name) {
  const std::string csv = (scratch() / (name + ".csv")).string(), dir = (scratch() / "src" / name).string();
  const std::string log = (scratch() / (name + ".out")).string();  // scratch() names this process: made before the fork
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(out, 1);
    ::dup2(out, 2);
    ::execl(AUTOGRAD_CLI, AUTOGRAD_CLI, "grade", "--class", dir.c_str(), "--exercise",
            "softmax", "--csv", csv.c_str(), "--jobs", "4", "--sandbox", "none", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  return watch_peak_kib(pid);
}

// Four submissions, each four processes writing their answer pipe as fast as they can, without the
// sandbox (where writers outlive the first and the drain after its exit must stop too). The
// grader's peak is compared with its own when four submissions each write just under the cap
// (960 KiB) once: a flood may cost no more than an allowed output. Before the cap was enforced
// while reading, the floods took it to 320 MB. (An absolute bound of 100 MiB failed in the
// sanitizer tree, where AddressSanitizer's shadow and quarantine put the grader at 102 MiB.)
BOOST_AUTO_TEST_CASE(four_floods_of_stdout_are_cut_while_they_are_read) {
  const std::string flood = "arma::mat softmax_backward(const arma::mat& y, const arma::mat&) {\n"
                            "  static char block[1 << 16];\n  for (int i = 0; i < 3; ++i) if (::fork() == 0) break;\n"
                            "  for (;;) ::write(3, block, sizeof block);\n  return y;\n}\n";
  const std::string under = "arma::mat softmax_backward(const arma::mat& y, const arma::mat&) {\n"
                            "  static char block[1 << 16];\n  static bool once = false;\n"
                            "  if (!once) for (int i = 0; i < 15; ++i) ::write(3, block, sizeof block);\n"
                            "  once = true;\n  return y;\n}\n";
  for (int i = 0; i < 4; ++i) {
    write("floods/f" + std::to_string(i) + ".cpp", kHead + flood);
    write("under/u" + std::to_string(i) + ".cpp", kHead + under);
  }
  const long allowed = class_peak_kib("under");
  const long peak = class_peak_kib("floods");
  const std::string table = slurp(scratch() / "floods.csv");
  BOOST_TEST(has(table, "wrote more than 1048576 bytes of output (killed)"), table << slurp(scratch() / "floods.out"));
  BOOST_TEST(!has(slurp(scratch() / "under.csv"), "wrote more than"), slurp(scratch() / "under.csv"));
  // The floods' extra writers and pipes: a few MiB at most (four 1 MiB caps in all).
  BOOST_TEST(peak < allowed + 16 * 1024, "peak " << peak << " KiB with the floods, " << allowed << " KiB with outputs under the cap");
  BOOST_TEST_MESSAGE("the grader's peak resident size: " << peak / 1024 << " MiB with four floods, "
                     << allowed / 1024 << " MiB with four outputs under the cap");
}

BOOST_AUTO_TEST_CASE(a_noexec_tmpdir_is_the_graders_error_not_a_zero) {
  const fs::path tmp = scratch() / "noexec";
  fs::create_directories(tmp);
  const fs::path right = write("right.cpp", kHead + kRight);
  // A private mount namespace, so that the noexec tmpfs is nobody else's business (needs root or user namespaces).
  const std::string inner = "mount -t tmpfs -o noexec,size=64m tmpfs " + quote(tmp.string()) + " && TMPDIR=" +
                            quote(tmp.string()) + " " + quote(AUTOGRAD_CLI) + " grade " + sandbox_option("") + quote(right.string());
  const int can = std::system("unshare --mount --map-root-user true >/dev/null 2>&1 || unshare --mount true >/dev/null 2>&1");
  if (can != 0) {
    BOOST_TEST_MESSAGE("cannot make a private mount here (no unshare, no user namespaces): the noexec case is not run");
    return;
  }
  const Run r = cli_test::run_shell("unshare --mount sh -c " + quote(inner) + " || unshare --mount --map-root-user sh -c " +
                                    quote(inner));
  const std::string &out = r.out, &err = r.err;
  BOOST_TEST(r.status == 3, out << err);
  BOOST_TEST(has(err, "the grader cannot grade here: the temporary folder"), err);
  BOOST_TEST(has(err, "noexec"), err);
  BOOST_TEST(!has(out, "score:"), out);
}

// The build precompiles Armadillo for the grader's compiles (assignments/CMakeLists.txt).
// GCC 12 crashes ("internal compiler error") on a .gch built at another -O level, so a
// toolchain whose flags were edited after the build must set the header aside: before
// that check, this correct answer was "does not compile".
BOOST_AUTO_TEST_CASE(a_precompiled_header_built_with_other_flags_is_set_aside) {
  const fs::path real = fs::path(AUTOGRAD_CLI).parent_path().parent_path() / "assignments" / "grade_toolchain.txt";
  const std::string toolchain = slurp(real);
  const fs::path right = write("right.cpp", kHead + kRight);
  if (!has(toolchain, "precompiled_header=")) {
    BOOST_TEST_MESSAGE("this build precompiles no header (not GCC): nothing to set aside");
    return;
  }
  // As built: the banner says what the compiler also sees when bwrap hides the rest.
  const Run as_built = cli_test::run_shell(quote(AUTOGRAD_CLI) + " grade " + sandbox_option("") + quote(right.string()));
  BOOST_TEST(as_built.status == 0, as_built.out << as_built.err);
  BOOST_TEST(percent(as_built.out) == 100, as_built.out << as_built.err);
  if (has(as_built.out + as_built.err, "sandbox: bwrap")) {
    BOOST_TEST(has(as_built.out + as_built.err, "precompiled Armadillo"), as_built.out << as_built.err);
  }
  // The same build with compile_flags edited to -O2 afterwards.
  const fs::path build = scratch() / "build-edited";  // a_missing_compiler_... has its own "build"
  fs::create_directories(build / "cli");
  fs::create_directories(build / "assignments");
  fs::copy_file(AUTOGRAD_CLI, build / "cli" / "autograd");
  std::string edited = std::regex_replace(toolchain, std::regex("compile_flags=([^\n]*)-O1"), "compile_flags=$1-O2");
  BOOST_REQUIRE(edited != toolchain);
  std::ofstream(build / "assignments" / "grade_toolchain.txt") << edited;
  const Run r = cli_test::run_shell(quote((build / "cli" / "autograd").string()) + " grade " + sandbox_option("") +
                                    quote(right.string()));
  BOOST_TEST(r.status == 0, r.out << r.err);
  BOOST_TEST(percent(r.out) == 100, r.out << r.err);
  BOOST_TEST(!has(r.out + r.err, "precompiled Armadillo"), r.out << r.err);
}

// A grader whose precompiled header (or any folder it shows the compiles) lives
// under /tmp: bwrap gives each compile a fresh /tmp, so those folders are bound
// after it, or the compile cannot open them (every submission "did not compile").
BOOST_AUTO_TEST_CASE(a_precompiled_header_under_tmp_stays_visible_in_the_sandbox) {
  const fs::path real = fs::path(AUTOGRAD_CLI).parent_path().parent_path() / "assignments" / "grade_toolchain.txt";
  const std::string toolchain = slurp(real);
  std::smatch header;
  if (!std::regex_search(toolchain, header, std::regex("precompiled_header=([^\n]+)")) || !bwrap_starts()) {
    BOOST_TEST_MESSAGE("no precompiled header in this build, or no bwrap here: nothing to check");
    return;
  }
  const fs::path pch = scratch() / "pch-in-tmp", build = scratch() / "build-tmp-pch";
  BOOST_REQUIRE(pch.string().rfind(fs::temp_directory_path().string(), 0) == 0);
  fs::create_directories(pch);
  for (const std::string suffix : {"", ".gch"}) fs::copy_file(header[1].str() + suffix, pch / ("armadillo.h" + suffix));
  fs::create_directories(build / "cli");
  fs::create_directories(build / "assignments");
  fs::copy_file(AUTOGRAD_CLI, build / "cli" / "autograd");
  std::ofstream(build / "assignments" / "grade_toolchain.txt")
      << std::regex_replace(toolchain, std::regex("precompiled_header=[^\n]+"), "precompiled_header=" + (pch / "armadillo.h").string());
  const fs::path right = write("right-tmp.cpp", kHead + kRight);
  const Run r = cli_test::run_shell(quote((build / "cli" / "autograd").string()) + " grade --sandbox bwrap " + quote(right.string()));
  BOOST_TEST(r.status == 0, r.out << r.err);
  BOOST_TEST(percent(r.out) == 100, r.out << r.err);
  BOOST_TEST(has(r.out + r.err, "precompiled Armadillo"), r.out << r.err);
  fs::remove_all(pch);
}

BOOST_AUTO_TEST_CASE(a_missing_compiler_is_the_graders_error_not_a_zero) {
  // A copy of the program beside a toolchain file that names a compiler that is not there.
  const fs::path build = scratch() / "build";
  fs::create_directories(build / "cli");
  fs::create_directories(build / "assignments");
  fs::copy_file(AUTOGRAD_CLI, build / "cli" / "autograd");
  const fs::path real = fs::path(AUTOGRAD_CLI).parent_path().parent_path() / "assignments" / "grade_toolchain.txt";
  std::string toolchain = slurp(real);
  toolchain = std::regex_replace(toolchain, std::regex("compiler=[^\n]*"), "compiler=/nonexistent/c++");
  std::ofstream(build / "assignments" / "grade_toolchain.txt") << toolchain;
  const fs::path right = write("right.cpp", kHead + kRight);
  const Run r = cli_test::run_shell(quote((build / "cli" / "autograd").string()) + " grade " + quote(right.string()));
  const std::string &out = r.out, &err = r.err;
  BOOST_TEST(r.status == 3, out << err);
  BOOST_TEST(has(err, "the compiler '/nonexistent/c++' (from grade_toolchain.txt) is missing"), err);
  BOOST_TEST(!has(out, "score:"), out);
}
