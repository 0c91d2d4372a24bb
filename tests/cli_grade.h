// What the grader's command-line tests share: a scratch folder per test
// process with a caller folder holding only keep_me, `autograd grade ARGS`
// run from it, and the pieces of a softmax submission.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "assignments/grading/totals.h"
#include "cli_run.h"

namespace cli_grade {

namespace fs = std::filesystem;
using cli_test::has;
using cli_test::quote;
using cli_test::slurp;

// A scratch folder per test process, made and removed by a global fixture (a
// function-local static path would be destroyed before a global's destructor ran).
inline fs::path scratch() { return fs::temp_directory_path() / ("ag_cli_grade_" + std::to_string(::getpid())); }

struct Scratch {
  Scratch() {
    fs::remove_all(scratch());
    fs::create_directories(scratch());
    fs::create_directories(scratch() / "caller");
  }
  ~Scratch() { fs::remove_all(scratch()); }
};

using cli_test::Run;

// Whether bwrap starts here. Where it does not, `autograd grade` refuses to grade
// unless told --sandbox none, so the tests that are not about the sandbox say
// that there (and their output's banner says what is then not isolated).
inline bool bwrap_starts() {
  static const bool starts =
      std::system("bwrap --ro-bind / / --unshare-all --die-with-parent -- /bin/sh -c 'exit 0' >/dev/null 2>&1") == 0;
  return starts;
}

// Where `args` name no sandbox: "--sandbox none " where bwrap cannot start, "--sandbox bwrap "
// where it can but no control group can be made (not root: `--sandbox auto` refuses both),
// else "".
inline std::string sandbox_option(const std::string& args) {
  if (has(args, "--sandbox")) return "";
  if (!bwrap_starts()) return "--sandbox none ";
  return grading::totals_available() ? "" : "--sandbox bwrap ";
}

// What every sandbox's label adds where no control group can be made.
inline std::string totals_note() { return grading::totals_available() ? "" : "; totals NOT bounded"; }

// `autograd grade ARGS` from the caller folder (which holds only keep_me), with `env` before it.
inline Run grade(const std::string& args, const std::string& env = "") {
  const fs::path caller = scratch() / "caller";
  std::ofstream(caller / "keep_me") << "the caller's file\n";
  return cli_test::run("grade " + sandbox_option(args) + args, env, caller);
}

inline fs::path write(const std::string& name, const std::string& text) {
  const fs::path p = scratch() / "src" / name;
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
  return p;
}

const std::string kHead = "// exercise: softmax\n#include <cstdio>\n#include <cstdlib>\n#include <fstream>\n"
                          "#include <unistd.h>\n#include \"assignments/softmax/softmax.h\"\n";
const std::string kRight = "arma::mat softmax_backward(const arma::mat& y, const arma::mat& dy) {\n"
                           "  const arma::vec s = arma::sum(dy % y, 1);\n  return y % (dy.each_col() - s);\n}\n";
// A softmax backward without its sum term (it compiles, and scores nothing), and one that does not compile.
const std::string kWrong = "arma::mat softmax_backward(const arma::mat& y, const arma::mat& dy) { return y % dy; }\n";
const std::string kBroken = "arma::mat softmax_backward(const arma::mat& y, const arma::mat& dy) { return y % dy <<< ; }\n";

// The percentage on the parent's last "score:" line; -1 when there is none.
inline int percent(const std::string& out) {
  const std::regex score(R"(score: \d+/\d+ \((\d+)%\))");
  int p = -1;
  for (std::sregex_iterator it(out.begin(), out.end(), score), end; it != end; ++it) p = std::stoi((*it)[1]);
  return p;
}

inline bool sandboxed(const Run& r) { return has(r.out, "sandbox: bwrap"); }

}  // namespace cli_grade
