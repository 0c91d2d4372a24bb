// Cleaning up after children that were interrupted or escaped their group
// (sandbox.h): the registry of running groups and temporary folders.
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "assignments/grading/registry.h"
#include "assignments/grading/sandbox.h"

namespace grading {

namespace fs = std::filesystem;

namespace {

std::set<std::string> folders;

}  // namespace

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}

std::set<pid_t>& running_groups() {
  static std::set<pid_t> groups;
  return groups;
}

void install_interrupt_cleanup() {
  static std::once_flag once;
  std::call_once(once, [] {
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
    static sigset_t set;
    sigemptyset(&set);
    for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&set, s);
    ::pthread_sigmask(SIG_BLOCK, &set, nullptr);  // every thread started later inherits the mask
    std::thread([] {
      int sig = 0;
      ::sigwait(&set, &sig);
      std::lock_guard<std::mutex> lock(registry_mutex());
      for (pid_t g : running_groups()) ::kill(-g, SIGKILL);
      remove_own_groups();
      for (const std::string& f : folders) {
        std::error_code ec;
        fs::remove_all(f, ec);
      }
      std::fprintf(stderr, "autograd grade: interrupted by SIG%s: the student programs were killed and the "
                   "temporary folders removed\n", sigabbrev_np(sig));
      ::_exit(128 + sig);
    }).detach();
  });
}

void register_folder(const fs::path& folder) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  folders.insert(folder.string());
}

void unregister_folder(const fs::path& folder) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  folders.erase(folder.string());
}

void kill_orphans() {
  for (int round = 0; round < 50; ++round) {
    bool found = false;
    std::error_code ec;
    for (const fs::directory_entry& e : fs::directory_iterator("/proc", ec)) {
      const std::string name = e.path().filename().string();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      std::ifstream stat(e.path() / "stat");
      std::string line;
      std::getline(stat, line);
      const std::size_t close = line.rfind(')');
      if (close == std::string::npos) continue;
      char state = 0;
      long ppid = 0;
      if (std::sscanf(line.c_str() + close + 1, " %c %ld", &state, &ppid) != 2 || ppid != ::getpid()) continue;
      const pid_t pid = pid_t(std::stol(name));
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
      found = true;
    }
    if (!found) return;
  }
}

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

}  // namespace grading
