#include "assignments/grading/sandbox.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "autograd/error.h"
#include "assignments/grading/registry.h"
#include "assignments/grading/text.h"

namespace grading {

namespace fs = std::filesystem;

namespace {

const std::string& bwrap_path() {
  static const std::string path = [] {
    if (const char* named = std::getenv("AUTOGRAD_BWRAP"); named != nullptr && *named != '\0') return std::string(named);
    for (const char* p : {"/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap"}) {
      if (::access(p, X_OK) == 0) return std::string(p);
    }
    return std::string();
  }();
  return path;
}

// The sandbox's filesystem: /usr and what the loader and the compiler need, read-only; the folder writable.
// /tmp is a tmpfs of limits.tmp_bytes; so is the folder itself when limits.private_folder (the run),
// with only the program bound into it read-only, so nothing it writes reaches the disk.
std::vector<std::string> bwrap_arguments(const fs::path& folder, const std::vector<std::string>& visible,
                                         const Limits& limits, const std::string& program) {
  std::vector<std::string> a = {bwrap_path(), "--die-with-parent", "--unshare-all", "--new-session",
                                "--cap-drop", "ALL", "--ro-bind", "/usr", "/usr"};
  for (const char* top : {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}) {
    std::error_code ec;
    if (fs::is_symlink(top, ec)) {
      a.insert(a.end(), {"--symlink", fs::read_symlink(top, ec).string(), top});
    } else if (fs::is_directory(top, ec)) {
      a.insert(a.end(), {"--ro-bind", top, top});
    }
  }
  for (const char* etc : {"/etc/alternatives", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d"}) {
    a.insert(a.end(), {"--ro-bind-try", etc, etc});
  }
  const std::string size = std::to_string(limits.tmp_bytes), dir = folder.string();
  a.insert(a.end(), {"--proc", "/proc", "--dev", "/dev", "--size", size, "--tmpfs", "/tmp"});
  // After the fresh /tmp: a visible folder under /tmp (a build or a precompiled header there) stays visible.
  for (const std::string& v : visible) a.insert(a.end(), {"--ro-bind-try", v, v});
  if (limits.private_folder) {
    a.insert(a.end(), {"--size", size, "--tmpfs", dir, "--ro-bind", program, program});
  } else {
    a.insert(a.end(), {"--bind", dir, dir});
  }
  a.insert(a.end(), {"--chdir", dir, "--"});
  return a;
}

std::vector<char*> c_strings(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (std::string& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// In the forked child: only async-signal-safe calls until execve. It joins its
// control group (its totals) and keeps no descriptor but its three pipes: the
// caller's open files, folders and sockets stay out of its reach.
[[noreturn]] void exec_child(char* const* argv, char* const* envp, const char* folder, const Limits& limits,
                             const std::vector<const char*>& join, int in, int out, int err) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::signal(SIGPIPE, SIG_DFL);
  ::signal(SIGXFSZ, SIG_DFL);
  for (const char* procs : join) {
    const int fd = ::open(procs, O_WRONLY | O_CLOEXEC);
    if (fd < 0 || ::write(fd, "0", 1) != 1) {
      static const char message[] = "autograd grade: cannot join the run's control group\n";
      ::write(err, message, sizeof message - 1);
      ::_exit(125);
    }
    ::close(fd);
  }
  ::dup2(in, 0);
  ::dup2(out, 1);
  ::dup2(err, 2);
  if (::close_range(3, ~0U, 0) != 0) ::_exit(125);
  const struct { int what; rlim_t value; } limits_list[] = {
      {RLIMIT_CPU, limits.cpu_seconds}, {RLIMIT_AS, limits.memory_bytes},
      {RLIMIT_FSIZE, limits.file_bytes}, {RLIMIT_CORE, 0}};
  for (const auto& l : limits_list) {
    const struct rlimit r = {l.value, l.value};
    ::setrlimit(l.what, &r);
  }
  if (limits.run_as != 0) become(limits, err);
  if (::chdir(folder) != 0) ::_exit(126);
  ::execve(argv[0], argv, envp);
  ::_exit(127);
}

void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

// Reads what `fd` has now, keeping at most `keep` bytes of it; false at end of file.
// At most 1 MiB a call, so a fast writer never keeps the loop from its deadline
// and never makes this process hold more than `keep`.
bool read_some(int fd, std::string& into, std::size_t keep) {
  char buffer[65536];
  for (int round = 0; round < 16; ++round) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n == 0) return false;
    if (n < 0) return errno == EAGAIN || errno == EINTR;
    into.append(buffer, std::min<std::size_t>(std::size_t(n), keep - std::min(keep, into.size())));
  }
  return true;
}

struct Pipes {
  int in[2], out[2], err[2];
};

// The poll loop: feeds stdin, collects the output, enforces the deadline and the output cap.
void supervise(pid_t pid, Pipes& p, const std::string& input, const Limits& limits, RunResult& r, int& status) {
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::duration<double>(limits.wall_seconds);
  std::size_t written = 0;
  bool out_open = true, err_open = true, exited = false;
  int in_fd = p.in[1];
  if (input.empty()) { ::close(in_fd); in_fd = -1; }
  while (!exited || out_open || err_open) {
    if (::waitpid(pid, &status, WNOHANG) == pid) exited = true;
    if (exited) {  // drain what is there; a background process may hold the pipes open
      if (out_open) read_some(p.out[0], r.out, limits.output_bytes + 1);
      if (err_open) read_some(p.err[0], r.err, 65536);
      r.output_overflow = r.out.size() > limits.output_bytes;
      break;
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      r.timed_out = true;
      break;
    }
    pollfd fds[3] = {{out_open ? p.out[0] : -1, POLLIN, 0}, {err_open ? p.err[0] : -1, POLLIN, 0},
                     {in_fd, POLLOUT, 0}};
    const int wait_ms = int(std::min(50.0, std::chrono::duration<double, std::milli>(deadline - now).count()) + 1);
    ::poll(fds, 3, wait_ms);
    if (out_open && (fds[0].revents & (POLLIN | POLLHUP))) out_open = read_some(p.out[0], r.out, limits.output_bytes + 1);
    if (err_open && (fds[1].revents & (POLLIN | POLLHUP))) err_open = read_some(p.err[0], r.err, 65536);
    if (r.out.size() > limits.output_bytes) {
      r.output_overflow = true;
      break;
    }
    if (in_fd >= 0 && (fds[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
      const ssize_t n = ::write(in_fd, input.data() + written, input.size() - written);
      if (n > 0) written += std::size_t(n);
      if (n < 0 && errno != EAGAIN) written = input.size();  // the child closed its stdin
      if (written == input.size()) { ::close(in_fd); in_fd = -1; }
    }
  }
  if (in_fd >= 0) ::close(in_fd);
  ::kill(-pid, SIGKILL);  // the whole group, whatever it left running
  if (!exited) ::waitpid(pid, &status, 0);
  r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Why bwrap cannot start here, or "" when it can: a bwrap that runs `exit 0` in new namespaces.
std::string bwrap_failure() {
  if (bwrap_path().empty()) return "bwrap (bubblewrap) is not installed";
  Limits probe;
  probe.wall_seconds = 10;
  const RunResult r = run_limited({bwrap_path(), "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent",
                                   "--", "/bin/sh", "-c", "exit 0"},
                                  fs::temp_directory_path(), {}, probe, Isolation::None, "");
  if (r.exited_ok()) return "";
  const std::string said = r.err.substr(0, std::min(r.err.find('\n'), std::size_t(200)));
  return "bwrap (" + bwrap_path() + ") cannot start here: it " + r.describe(probe) + (said.empty() ? "" : ": " + as_text(said, false));
}

}  // namespace

Isolation choose_isolation(const std::string& wanted) {
  if (wanted == "none") return Isolation::None;
  if (wanted == "user") {
    if (::geteuid() == 0) return Isolation::User;
    throw GraderError("--sandbox user runs each submission as a user of its own, which needs root (this grader "
                      "runs as user " + std::to_string(::geteuid()) + "); use --sandbox bwrap, or run it as root");
  }
  if (wanted != "auto" && wanted != "bwrap") throw ag::DataError("--sandbox must be auto, bwrap, user or none, got '" + wanted + "'");
  const std::string why = bwrap_failure();
  if (why.empty() && wanted == "auto" && !totals_available()) {
    throw GraderError("--sandbox auto needs the totals bounded, and no control group can be made here (it needs root, "
                      "or a delegated cgroup): a submission's processes and memory would be limited per process only, so "
                      "a fork bomb or three programs of 700 MiB could take the machine; run the grader as root, or pass "
                      "--sandbox bwrap to grade in bwrap with the totals NOT bounded (the banner and every report then "
                      "say so)");
  }
  if (why.empty()) return Isolation::Bwrap;
  throw GraderError("--sandbox " + wanted + " needs a sandbox, and " + why + "; install bubblewrap and allow "
                    "unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1), or, as root in a container, pass --sandbox user "
                    "(docs/grading.md says what it isolates), or pass --sandbox none "
                    "to grade without isolation");
}

std::string sandbox_label(Isolation isolation) {
  const std::string totals = totals_available() ? "" : "; totals NOT bounded";
  if (isolation == Isolation::Bwrap) return totals.empty() ? "bwrap" : "bwrap (" + totals.substr(2) + ")";
  if (isolation == Isolation::User) return "user (its own user; network and world-readable files NOT cut off" + totals + ")";
  return "none (NOT isolated: --sandbox none" + totals + ")";
}

std::string isolation_text(Isolation isolation, const Limits& run, const std::string& precompiled) {
  const std::string totals = "; " + totals_text(run.totals) + "; no descriptor of the caller's";
  if (isolation == Isolation::Bwrap) {
    const std::string also = precompiled.empty() ? "" : " (and, to the compiler, the build's precompiled Armadillo in " +
                                                             precompiled + ")";
    return "sandbox: bwrap (no network, its own PID namespace, only /usr and its own folder visible" + also + ", "
           "read-only outside that folder; time, CPU, memory, file-size and output limits; its /tmp and, when it runs, "
           "its folder are tmpfs of " + std::to_string(run.tmp_bytes >> 20) + " MiB" + totals + ")";
  }
  if (isolation == Isolation::User) {
    return "sandbox: user (--sandbox user): each submission compiled and run as a user of its own (uid 40000-59999), "
           "in a folder only it may enter, with no new privileges and at most " + std::to_string(run.totals.processes) +
           " processes (RLIMIT_NPROC); time, CPU, memory, file-size and output limits" + totals +
           "; but the network is NOT cut, it may read what every user may read, and it may write into world-writable "
           "places (/tmp, /dev/shm)";
  }
  return "sandbox: none (--sandbox none): time, CPU, memory, file-size and output limits, its own "
         "process group and a fresh folder" + totals + ", but the network and the filesystem are NOT isolated, "
         "and the disk it writes is not bounded";
}

std::string RunResult::describe(const Limits& limits) const {
  const std::string how = what_happened(limits);
  return limit_hit.empty() ? how : how + "; it " + limit_hit;
}

std::string RunResult::what_happened(const Limits& limits) const {
  char buf[160];
  if (timed_out) {
    std::snprintf(buf, sizeof buf, "timed out after %g s (killed)", limits.wall_seconds);
    return buf;
  }
  if (output_overflow) return "wrote more than " + std::to_string(limits.output_bytes) + " bytes of output (killed)";
  int sig = signal;
  if (sig == 0 && exit_status > 128 && exit_status < 128 + 65) sig = exit_status - 128;  // bwrap's way to say it
  if (sig == SIGXCPU) return "exceeded its CPU time limit of " + std::to_string(limits.cpu_seconds) + " s (SIGXCPU)";
  if (sig != 0) {
    const char* abbrev = sigabbrev_np(sig);
    std::snprintf(buf, sizeof buf, "was killed by SIG%s (%s)", abbrev ? abbrev : "?", sigdescr_np(sig) ? sigdescr_np(sig) : "");
    return buf;
  }
  return "exited with status " + std::to_string(exit_status);
}

RunResult run_limited(const std::vector<std::string>& argv, const fs::path& folder,
                      const std::vector<std::string>& visible, const Limits& limits, Isolation isolation,
                      const std::string& input) {
  std::vector<std::string> full = isolation == Isolation::Bwrap ? bwrap_arguments(folder, visible, limits, argv.at(0))
                                                                : std::vector<std::string>{};
  full.insert(full.end(), argv.begin(), argv.end());
  std::vector<std::string> env = {"PATH=/usr/bin:/bin", "LANG=C", "OPENBLAS_NUM_THREADS=1",
                                  "HOME=" + folder.string(), "TMPDIR=" + folder.string()};
  std::vector<char*> c_argv = c_strings(full), c_env = c_strings(env);
  const std::string dir = folder.string();
  const ControlGroup group(limits.totals);
  std::vector<const char*> join;
  for (const std::string& f : group.join_files()) join.push_back(f.c_str());
  Pipes p{};
  if (::pipe2(p.in, O_CLOEXEC) != 0 || ::pipe2(p.out, O_CLOEXEC) != 0 || ::pipe2(p.err, O_CLOEXEC) != 0) {
    throw ag::Error(std::string("cannot create pipes: ") + std::strerror(errno));
  }
  std::unique_lock<std::mutex> lock(registry_mutex());
  const pid_t pid = ::fork();
  if (pid < 0) throw ag::Error(std::string("cannot start a process: ") + std::strerror(errno));
  if (pid == 0) exec_child(c_argv.data(), c_env.data(), dir.c_str(), limits, join, p.in[0], p.out[1], p.err[1]);
  ::setpgid(pid, pid);
  running_groups().insert(pid);
  lock.unlock();
  for (int fd : {p.in[0], p.out[1], p.err[1]}) ::close(fd);
  for (int fd : {p.in[1], p.out[0], p.err[0]}) set_nonblocking(fd);
  RunResult r;
  int status = 0;
  supervise(pid, p, input, limits, r, status);
  group.kill_all();
  ::close(p.out[0]);
  ::close(p.err[0]);
  lock.lock();
  running_groups().erase(pid);
  lock.unlock();
  if (WIFEXITED(status)) r.exit_status = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  r.limit_hit = group.limit_hit();
  return r;
}

}  // namespace grading
