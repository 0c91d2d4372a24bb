// Running untrusted programs (a student's compile and its grading run): a
// wall-clock limit, CPU, memory, file-size and output limits, totals for all
// its processes (a cgroup: totals.h), no descriptor but its three pipes,
// its own process group in a fresh folder, and every process it started
// killed at the end. With bubblewrap (bwrap) it also runs in new namespaces:
// no network, its own PID namespace (nothing outlives it), and a filesystem
// that holds only /usr, a few files of /etc, a sized tmpfs /tmp and its
// folder, the one writable place (itself a sized tmpfs when the program runs).
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

#include "assignments/grading/totals.h"
#include "autograd/error.h"

namespace grading {

// The grader cannot grade here (no compiler, a noexec TMPDIR, a sandbox that
// fails): its own error, exit status 3, and never a student's score.
struct GraderError : ag::Error {
  using ag::Error::Error;
};

// User: for containers without user namespaces (Gradescope's, PrairieLearn's), where bwrap
// cannot start but the grader is root: each submission's compile and run as a user of its
// own (private_uid), in a folder only that user may enter, with no new privileges.
enum class Isolation { Bwrap, User, None };

// "none" is the only way to grade without isolation: "auto" and "bwrap" both
// need a bwrap that starts here, else a GraderError saying why and what to do;
// "user" needs root. $AUTOGRAD_BWRAP names the bwrap program, when it is not in
// /usr/bin, /bin or /usr/local/bin (the tests point it at one that fails).
Isolation choose_isolation(const std::string& wanted);

// The user a submission runs as with Isolation::User: one of 40000-59999 that /etc/passwd
// does not name, different for each submission of a run (and, most likely, of concurrent
// runs), so that no two submissions can reach each other's files or processes.
// Within 65536, so that a container mapping 65536 ids can switch to it.
uid_t private_uid(std::size_t index);
// `folder` made `uid`'s own, mode 0700, so no other submission may enter it: "", or why it cannot be.
std::string give_folder(const std::filesystem::path& folder, uid_t uid);

struct Limits {
  double wall_seconds = 10;
  rlim_t cpu_seconds = 11;
  rlim_t memory_bytes = rlim_t(2) << 30;
  rlim_t file_bytes = rlim_t(64) << 20;
  std::size_t output_bytes = std::size_t(1) << 20;  // stdout beyond this: killed (checked as it is read)
  Totals totals;                                    // all its processes together (totals.h)
  long long tmp_bytes = 64LL << 20;                 // with bwrap: the size of its /tmp (a tmpfs)
  bool private_folder = false;                      // with bwrap: its folder a tmpfs of tmp_bytes too
  uid_t run_as = 0;                                 // not 0: runs as this user (Isolation::User)
};

// A few words for every row and document: "bwrap", "user (...)", "none (NOT isolated: --sandbox none)",
// with "totals NOT bounded" where no control group can be made.
std::string sandbox_label(Isolation isolation);

// One line for the output: what is isolated and what is bounded, with the run's limits.
std::string isolation_text(Isolation isolation, const Limits& run, const std::string& precompiled = "");

// In the forked child, before it execs (async-signal-safe calls only): it becomes limits.run_as
// (own_user.cpp), or writes why not to `err` and exits 125.
void become(const Limits& limits, int err);

struct RunResult {
  int exit_status = -1;  // when it exited
  int signal = 0;        // when a signal stopped it
  bool timed_out = false, output_overflow = false;
  double wall_seconds = 0;
  std::string out, err;  // err keeps its first 64 KiB
  std::string limit_hit;  // the total it reached, named (ControlGroup::limit_hit), or ""
  bool exited_ok() const { return exit_status == 0 && !timed_out && !output_overflow; }
  // "timed out after 10 s", "killed by SIGSEGV (...)", and the total it reached, if any.
  std::string describe(const Limits& limits) const;
  std::string what_happened(const Limits& limits) const;
};

// Runs argv[0] (an absolute path) in `folder` with `input` on its stdin.
// `visible` are extra read-only paths inside the sandbox (the compiler's, say).
RunResult run_limited(const std::vector<std::string>& argv, const std::filesystem::path& folder,
                      const std::vector<std::string>& visible, const Limits& limits, Isolation isolation,
                      const std::string& input);

// Ctrl-C and kill: from the first call on, SIGINT, SIGTERM and SIGHUP kill every
// running child's process group, remove the registered folders and exit 130/143/129.
void install_interrupt_cleanup();
void register_folder(const std::filesystem::path& folder);
void unregister_folder(const std::filesystem::path& folder);
// Without a PID namespace a child may escape its group (setsid, a double fork):
// as a subreaper this process inherits such orphans; this kills and reaps them.
void kill_orphans();
// A grade killed by SIGKILL leaves TMP/autograd-grade-PID-XXXXXX behind: removes
// the folders of this user whose grade no longer runs.
void remove_folders_of_dead_grades();

}  // namespace grading
