// autograd grade: grade one student's file, or a whole class (--class DIR).
//
// The trusted parent is this program. The student's file is built, in a
// sandbox and with a time limit, into a child program with the exercise's
// adapter (cli/grade_run.h); the child gets freshly drawn inputs on stdin and
// sends back only its gradients. The score is computed here (kit::score):
// nothing the child prints, writes or exits with can raise it.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <iostream>
#include <random>
#include <sstream>

#include "cli/cli.h"
#include "cli/grade_class.h"
#include "cli/grade_run.h"

namespace cli {

namespace fs = std::filesystem;

namespace {

// A grade killed by SIGKILL leaves TMP/autograd-grade-PID-XXXXXX; the next
// grade removes the folders of this user whose process no longer runs.
void remove_folders_of_dead_grades() {
  const std::string prefix = "autograd-grade-";
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(fs::temp_directory_path(), ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string rest = name.substr(prefix.size());
    const std::size_t dash = rest.find('-');
    if (dash == 0 || dash == std::string::npos || rest.find_first_not_of("0123456789") != dash || dash > 9) continue;
    struct stat st {};
    if (::lstat(e.path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::getuid()) continue;
    const long pid = std::stol(rest.substr(0, dash));
    if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) fs::remove_all(e.path(), ec);
  }
}

int grade_one(const std::string& file, const std::string& name, const ClassOptions& o) {
  const GradeSetup setup = prepare_grading(name, o.sandbox, o.timeout, o.compile_timeout);
  const RemoveOnExit remove{setup.root};
  std::cout << "building " << file << " for the '" << name << "' exercise ...\n"
            << isolation_text(setup.isolation, setup.run_limits) << "\n" << std::flush;
  const unsigned seed = o.seed >= 0 ? unsigned(o.seed) : std::random_device{}();
  const Outcome out = grade_submission(setup, file, seed, 0, false);
  kill_orphans();
  if (out.status == "does not compile" || out.status == "refused") {
    std::cout << out.compiler_output << "\n" << file << " " << out.reason.substr(out.status == "refused" ? 15 : 0)
              << "\nscore: 0/" << out.report.max_score() << " (0%) (it must build to be graded)\n";
    return 1;
  }
  if (!out.compiler_output.empty()) std::cout << out.compiler_output;  // warnings
  // The program's own prints come first, each line marked, so the grader's score line stays the last line.
  if (!out.program_output.empty()) {
    std::cout << "\nyour program's own output (not graded):\n";
    std::istringstream lines(out.program_output);
    for (std::string line; std::getline(lines, line);) std::cout << "  | " << line << "\n";
  }
  if (!out.limit_hit.empty()) std::cout << "\nyour program: " << out.limit_hit << "\n";
  std::cout << "\n";
  out.report.print(std::cout);
  return out.report.score() == out.report.max_score() && out.status == "graded" ? 0 : 1;
}

}  // namespace

namespace {
int grade_files(const std::string& file, const std::string& exercise, const std::string& class_dir,
                const std::string& csv, ClassOptions& o);
}  // namespace

int cmd_grade(const std::vector<std::string>& args) {
  po::options_description options("options");
  std::string file, exercise, class_dir, csv, sandbox = "auto";
  long long jobs = 1, seed = -1;
  double timeout = 10, compile_timeout = 60;
  options.add_options()
      ("file", po::value(&file), "the student's .cpp file (e.g. assignments/softmax/softmax.cpp)")
      ("exercise", po::value(&exercise), "the exercise (a folder of assignments/; default: from the file)")
      ("class", po::value(&class_dir), "grade every .cpp file (or student folder) in this folder")
      ("csv", po::value(&csv), "with --class: write one row per submission to this CSV file")
      ("jobs", po::value(&jobs)->default_value(1), "with --class: submissions graded at the same time")
      ("timeout", po::value(&timeout)->default_value(10, "10"), "seconds a student's program may run")
      ("compile-timeout", po::value(&compile_timeout)->default_value(60, "60"), "CPU seconds a compile may use (its wall clock: 4 times that)")
      ("seed", po::value(&seed), "draw the inputs from this seed (default: a fresh one every run)")
      ("sandbox", po::value(&sandbox)->default_value("auto"), "auto, bwrap or none (see docs/grading.md)");
  po::positional_options_description positional;
  positional.add("file", 1);
  po::variables_map vm;
  if (!parse_options("grade", "autograd grade FILE.cpp\nautograd grade --class DIR --exercise NAME --csv scores.csv "
                     "[--jobs N] [--timeout S]\nBuilds the student's file into a sandboxed program, sends it freshly "
                     "drawn inputs, and scores the gradients it returns, with a hint for each wrong one.\n"
                     "Exit status: 0 full marks (--class: the CSV was written), 1 not full marks or the file does "
                     "not build, 2 bad usage, 3 the grader cannot grade here (no compiler, a noexec TMPDIR, a "
                     "failing sandbox).",
                     options, args, vm, &positional)) {
    return 0;
  }
  ClassOptions o;
  o.jobs = int(require_positive("--jobs", jobs));
  o.timeout = require_positive("--timeout", timeout);
  o.compile_timeout = require_positive("--compile-timeout", compile_timeout);
  if (o.jobs > 64) throw UsageError("--jobs must be at most 64, got " + std::to_string(jobs));
  if (o.timeout > 3600 || o.compile_timeout > 3600) throw UsageError("--timeout and --compile-timeout must be at most 3600 s");
  if (vm.count("seed")) o.seed = require_non_negative("--seed", seed);
  if (o.seed > 4294967295LL) throw UsageError("--seed must be at most 4294967295, got " + std::to_string(seed));
  o.sandbox = sandbox;
  if (sandbox != "auto" && sandbox != "bwrap" && sandbox != "none") {
    throw UsageError("--sandbox must be auto, bwrap or none, got '" + sandbox + "'");
  }
  // The caller's open descriptors (a log, a checkout, a socket) are not the
  // grader's business: dropped before any thread or child starts, so that not
  // even the grader's own /proc/PID/fd leads to them.
  ::close_range(3, ~0U, 0);
  install_interrupt_cleanup();
  remove_folders_of_dead_grades();
  remove_groups_of_dead_grades();
  try {
    return grade_files(file, exercise, class_dir, csv, o);
  } catch (const GraderError& e) {
    std::cerr << "autograd grade: the grader cannot grade here: " << e.what() << "\n";
    return 3;
  }
}

namespace {

int grade_files(const std::string& file, const std::string& exercise, const std::string& class_dir,
                const std::string& csv, ClassOptions& o) {
  if (!class_dir.empty()) {
    if (!file.empty()) throw UsageError("give either FILE or --class DIR, not both");
    if (exercise.empty()) throw UsageError("--class needs --exercise NAME");
    o.dir = class_dir;
    o.csv = csv;
    o.exercise = exercise_of(fs::path(class_dir) / "x.cpp", exercise);
    return grade_class(o);
  }
  if (!csv.empty()) throw UsageError("--csv goes with --class DIR");
  if (file.empty()) throw UsageError("which file? autograd grade FILE.cpp");
  if (!fs::is_regular_file(file)) throw UsageError("no such file: " + file);
  return grade_one(file, exercise_of(file, exercise), o);
}

}  // namespace

}  // namespace cli
