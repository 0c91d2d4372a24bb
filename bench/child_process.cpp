#include "bench/child_process.h"

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace bench {

namespace {

using Clock = std::chrono::steady_clock;

Clock::time_point deadline_after(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

int shell_status(int raw) { return WIFEXITED(raw) ? WEXITSTATUS(raw) : WIFSIGNALED(raw) ? 128 + WTERMSIG(raw) : -1; }

}  // namespace

double peer_timeout(double fallback) {
  const char* text = std::getenv("AUTOGRAD_PEER_TIMEOUT");
  if (text == nullptr) return fallback;
  char* end = nullptr;
  const double seconds = std::strtod(text, &end);
  if (*text == '\0' || *end != '\0' || !std::isfinite(seconds) || seconds <= 0 || seconds > 1e6) {
    throw std::runtime_error(std::string("AUTOGRAD_PEER_TIMEOUT='") + text +
                             "' is not a number of seconds (more than 0, at most 1e6)");
  }
  return seconds;
}

ChildProcess::ChildProcess(const std::string& command, int io_fd) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (io_fd >= 0) {
    posix_spawn_file_actions_adddup2(&actions, io_fd, 0);  // dup2 clears close-on-exec on 0 and 1
    posix_spawn_file_actions_adddup2(&actions, io_fd, 1);
  }
  // A group of its own: stop() reaches whatever the shell or python started.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  const char* argv[] = {"/bin/sh", "-c", command.c_str(), nullptr};
  const int rc = posix_spawn(&pid_, "/bin/sh", &actions, &attributes, const_cast<char* const*>(argv), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (rc != 0) {
    pid_ = -1;
    throw std::runtime_error("cannot start " + command + ": " + std::strerror(rc));
  }
}

ChildProcess::~ChildProcess() { stop(); }

std::optional<int> ChildProcess::wait_for(double seconds) {
  if (pid_ <= 0) return -1;
  const Clock::time_point deadline = deadline_after(seconds);
  // waitpid has no timeout: poll it, every few milliseconds (the exit is usually prompt).
  for (std::chrono::milliseconds pause(1);; pause = std::min(pause * 2, std::chrono::milliseconds(50))) {
    int raw = 0;
    const pid_t done = waitpid(pid_, &raw, WNOHANG);
    if (done == pid_ || (done < 0 && errno != EINTR)) {
      pid_ = -1;
      return done > 0 ? shell_status(raw) : -1;
    }
    if (Clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(pause);
  }
}

void ChildProcess::stop() {
  if (pid_ <= 0) return;
  ::kill(-pid_, SIGKILL);
  int raw = 0;
  while (waitpid(pid_, &raw, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
}

bool wait_readable(int fd, double seconds) {
  const Clock::time_point deadline = deadline_after(seconds);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1 << 30)));
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return true;  // let the read report it
  }
}

}  // namespace bench
