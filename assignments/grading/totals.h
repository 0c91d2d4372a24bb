// Limits on the totals of everything one student program starts, which
// per-process rlimits cannot give: how many processes at once (a fork bomb),
// and how much memory all of them hold together. They come from a control
// group (cgroup v2, or the v1 pids and memory hierarchies) made for the one
// run and removed after it. RLIMIT_NPROC is no substitute: it counts every
// process of the user, and root is exempt from it. Where no cgroup can be
// made (no permission, no such controller), the totals are not bounded, and
// totals_text() says so.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace grading {

struct Totals {
  long processes = 64;                    // processes and threads at once (pids.max)
  long long memory_bytes = 1LL << 30;     // resident memory of all of them together, tmpfs pages included
};

// One control group for one run: made by join_files() before the fork, joined
// by the child before it execs, emptied and removed by the destructor.
class ControlGroup {
 public:
  // Inactive (no totals) when this machine does not let the grader make and join one (totals_available).
  explicit ControlGroup(const Totals& totals, bool check_available = true);
  ~ControlGroup();
  ControlGroup(const ControlGroup&) = delete;
  ControlGroup& operator=(const ControlGroup&) = delete;

  bool active() const { return !dirs_.empty(); }
  // The cgroup.procs files the child writes "0" to (itself), one per hierarchy.
  const std::vector<std::string>& join_files() const { return procs_; }
  // After the run: "its limit of 64 processes (pids.max)" or "its memory limit of 1024 MiB ...", else "".
  std::string limit_hit() const;
  void kill_all() const;  // every process still in the group

 private:
  Totals totals_;
  std::vector<std::string> dirs_, procs_;
  std::string pids_dir_, memory_dir_;
  bool v2_ = false;
};

// A grade killed by a signal leaves its groups behind (SIGKILL, or the exit
// after Ctrl-C): removed, with anything still in them, by the next grade.
void remove_groups_of_dead_grades();
void remove_own_groups();  // on an interrupt: this grade's own groups

// Whether this machine lets the grader make such groups and put a process in
// them (tried once, with a child that joins one and exits); one line for the banner.
bool totals_available();
std::string totals_text(const Totals& totals);

}  // namespace grading
