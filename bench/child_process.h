// A process the bench starts and talks to (the PyTorch peer, the probe that
// looks for torch): every wait on it is bounded, and stopping it ends its
// children too, so a python that hangs costs a message, never the bench.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

namespace bench {

// The seconds a wait on the peer may take: $AUTOGRAD_PEER_TIMEOUT when it is set
// (every wait alike; std::runtime_error naming it when it is not a positive
// number), else `fallback`, the wait's own default.
double peer_timeout(double fallback);

// "/bin/sh -c COMMAND" in a process group of its own; with io_fd >= 0, that
// descriptor as its stdin and stdout. Throws std::runtime_error when it cannot start.
class ChildProcess {
 public:
  ChildProcess(const std::string& command, int io_fd);
  ~ChildProcess();  // stops it if it still runs
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  bool running() const { return pid_ > 0; }
  // Waits at most `seconds` for it to exit: its exit status (128 + N for a
  // signal N), or nothing when it still runs.
  std::optional<int> wait_for(double seconds);
  // SIGKILL to its whole group, then reaps it.
  void stop();

 private:
  pid_t pid_ = -1;
};

// Waits at most `seconds` for `fd` to have something to read (or its end).
bool wait_readable(int fd, double seconds);

}  // namespace bench
