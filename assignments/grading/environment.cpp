#include "assignments/grading/environment.h"

#include <sys/statvfs.h>
#include <unistd.h>

#include "assignments/grading/text.h"

namespace grading {

namespace fs = std::filesystem;

// The limits of one run: the compile's CPU time is the limit, its wall clock four times that (a loaded
// machine stretches the wall clock, not the CPU time); the program's run is limited by the wall clock.
void set_limits(GradeSetup& s, double run_seconds, double compile_seconds) {
  s.run_limits.wall_seconds = run_seconds;
  s.run_limits.cpu_seconds = rlim_t(run_seconds) + 1;
  s.run_limits.memory_bytes = rlim_t(1) << 30;
  s.run_limits.file_bytes = rlim_t(1) << 20;
  s.run_limits.private_folder = true;
  s.compile_limits.wall_seconds = 4 * compile_seconds;
  s.compile_limits.cpu_seconds = rlim_t(compile_seconds) + 1;
  s.compile_limits.output_bytes = 1 << 20;
  s.compile_limits.totals.memory_bytes = 2LL << 30;  // a compile uses more than the program, in one process
}

// The grader's own environment, checked before any student is graded: its
// failures are the grader's errors (exit 3), never a student's 0.
void check_environment(const GradeSetup& s) {
  if (s.compiler.empty() || s.compiler[0] != '/' || ::access(s.compiler.c_str(), X_OK) != 0) {
    throw GraderError("the compiler '" + s.compiler + "' (from grade_toolchain.txt) is missing or cannot be run; "
                      "install it, or reconfigure the build");
  }
  struct statvfs vfs {};
  if (::statvfs(s.root.c_str(), &vfs) == 0 && (vfs.f_flag & ST_NOEXEC)) {
    throw GraderError("the temporary folder " + s.root.parent_path().string() + " is on a noexec mount, so no program "
                      "built there can run; set TMPDIR to a folder that allows running programs");
  }
}

// A program that does nothing, run as a student's program is: when that fails, the sandbox does.
void probe_sandbox(const GradeSetup& s) {
  const fs::path folder = s.root / "probe";
  fs::create_directories(folder);
  const fs::path program = folder / "true";
  fs::copy_file(fs::exists("/usr/bin/true") ? "/usr/bin/true" : "/bin/true", program);
  Limits limits = s.run_limits;
  if (s.isolation == Isolation::User) {
    limits.run_as = private_uid(0);
    if (const std::string why = give_folder(folder, limits.run_as); !why.empty()) throw GraderError("--sandbox user " + why);
  }
  const RunResult r = run_limited({program.string()}, folder, s.visible, limits, s.isolation, "");
  if (!r.exited_ok()) {
    throw GraderError("the sandbox cannot run a program that does nothing (it " + r.describe(s.run_limits) +
                      "), so no submission can be graded here: " + as_text(r.err.substr(0, 500), false));
  }
  fs::remove_all(folder);
}

}  // namespace grading
