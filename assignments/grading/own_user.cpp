// Isolation::User: each submission a user of its own (sandbox.h).
#include <grp.h>
#include <pwd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>

#include "assignments/grading/sandbox.h"

namespace grading {

namespace fs = std::filesystem;

// In the forked child (Isolation::User): the submission's own user, no group of the
// grader's, and no way back up (no setuid program raises it again). The user is
// fresh, so RLIMIT_NPROC counts only this submission's processes: a total of
// processes even where no control group can be made.
void become(const Limits& limits, int err) {
  const uid_t uid = limits.run_as;
  const struct rlimit procs = {rlim_t(limits.totals.processes), rlim_t(limits.totals.processes)};
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || ::setgroups(0, nullptr) != 0 || ::setgid(uid) != 0 ||
      ::setuid(uid) != 0 || ::setrlimit(RLIMIT_NPROC, &procs) != 0) {
    static const char message[] = "autograd grade: cannot switch to the submission's own user\n";
    ::write(err, message, sizeof message - 1);
    ::_exit(125);
  }
}

uid_t private_uid(std::size_t index) {
  static std::atomic<unsigned> next{unsigned(::getpid()) * 7919u};
  static std::mutex lookups;  // getpwuid and getgrgid share static buffers
  const std::lock_guard<std::mutex> lock(lookups);
  for (;;) {
    const uid_t uid = uid_t(40000 + (next++ + index) % 20000);
    if (::getpwuid(uid) == nullptr && ::getgrgid(uid) == nullptr) return uid;
  }
}

std::string give_folder(const fs::path& folder, uid_t uid) {
  if (::chown(folder.c_str(), uid, uid) == 0 && ::chmod(folder.c_str(), 0700) == 0) return "";
  return "cannot give " + folder.string() + " to user " + std::to_string(uid) + " (" + std::strerror(errno) + ")";
}

}  // namespace grading
