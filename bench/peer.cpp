#include "bench/peer.h"

#include "data/resources.h"

// Boost 1.74's JSON parser still includes the old <boost/bind.hpp>, which prints a
// deprecation note on every build unless this keeps its global placeholders.
#define BOOST_BIND_GLOBAL_PLACEHOLDERS
#include <boost/property_tree/json_parser.hpp>
#include <boost/property_tree/ptree.hpp>

#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace bench {

Spread spread_of(std::vector<double> values) {
  if (values.empty()) throw std::invalid_argument("spread_of: no values");
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  Spread s;
  s.min = values.front();
  s.max = values.back();
  s.median = n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
  s.rounds = static_cast<int>(n);
  return s;
}

PeerLine parse_peer_line(const std::string& line) {
  PeerLine out;
  if (line.empty() || line[0] != '{') return out;
  std::istringstream is(line);
  boost::property_tree::ptree p;
  try {
    boost::property_tree::read_json(is, p);
  } catch (const boost::property_tree::json_parser_error&) {
    throw std::runtime_error("peer output: not JSON: " + line);
  }
  if (p.count("peer")) {
    out.kind = PeerLine::Status;
    out.status = p.get<std::string>("peer");
    return out;
  }
  PeerResult& r = out.result;
  try {
    r.name = p.get<std::string>("case");
    r.shape = p.get<std::string>("shape");
  } catch (const boost::property_tree::ptree_error&) {
    throw std::runtime_error("peer output: a line without case and shape: " + line);
  }
  if (p.count("missing")) {
    out.kind = PeerLine::Missing;
    out.status = p.get<std::string>("missing");
    return out;
  }
  // Read as text and converted here: ptree's get<double> trips GCC 12's
  // -Wmaybe-uninitialized inside Boost's optional.
  const std::string median = p.get<std::string>("median_s", "");
  char* end = nullptr;
  r.median_s = std::strtod(median.c_str(), &end);
  if (median.empty() || *end != '\0' || !std::isfinite(r.median_s) || r.median_s <= 0) {
    throw std::runtime_error("peer output: median_s is not a positive number of seconds: " + line);
  }
  r.note = p.get<std::string>("note", "");
  out.kind = PeerLine::Timed;
  return out;
}

std::string find_torch_python(std::string& why) {
  std::vector<std::string> pythons;
  if (const char* env = std::getenv("AUTOGRAD_PYTHON")) pythons.push_back(env);
  pythons.push_back("python3");
  pythons.push_back("/usr/bin/python3");
  for (const std::string& py : pythons) {
    const std::string probe = "'" + py + "' -c 'import torch' >/dev/null 2>&1";
    if (std::system(probe.c_str()) == 0) return py;
  }
  why = "no python3 here can import torch (apt-get install -y python3-torch): ours alone";
  return "";
}

TorchPeer::TorchPeer(const std::string& args, const std::string& env) {
  const std::string py = find_torch_python(status_);
  if (py.empty()) return;
  const std::string script = ag::shipped_file("bench/peer_torch.py");
  const std::string command = "exec env OMP_NUM_THREADS=1 " + env + " '" + py + "' '" + script + "' --serve " + args;
  // One socket, both ways: the peer's stdin and stdout. A socket, not pipes, so a
  // request to a peer that died is an error (MSG_NOSIGNAL), not a SIGPIPE.
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    throw std::runtime_error(std::string("the PyTorch peer: socketpair: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 0);  // dup2 clears close-on-exec on 0 and 1
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  const char* argv[] = {"/bin/sh", "-c", command.c_str(), nullptr};
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, "/bin/sh", &actions, nullptr, const_cast<char* const*>(argv), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    throw std::runtime_error("the PyTorch peer (" + command + ") did not start: " + std::strerror(rc));
  }
  fd_ = fds[0];
  pid_ = pid;
  PeerLine first;
  std::string line;
  while (first.kind == PeerLine::Skip && read_line(line)) first = parse_peer_line(line);
  if (first.kind != PeerLine::Status) {
    const int status = finish();
    throw std::runtime_error("the PyTorch peer (" + command + ") did not say what it is (exit status " +
                             std::to_string(status) + ")");
  }
  status_ = first.status + " (" + py + ")";
}

TorchPeer::~TorchPeer() { finish(); }

int TorchPeer::finish() {
  if (pid_ <= 0) return -1;
  close(fd_);
  fd_ = -1;
  int raw = 0;
  while (waitpid(pid_, &raw, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  return WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
}

bool TorchPeer::read_line(std::string& line) {
  for (;;) {
    const std::size_t newline = pending_.find('\n');
    if (newline != std::string::npos) {
      line = pending_.substr(0, newline);
      pending_.erase(0, newline + 1);
      return true;
    }
    char buffer[4096];
    const ssize_t n = read(fd_, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    pending_.append(buffer, static_cast<std::size_t>(n));
  }
}

std::optional<PeerResult> TorchPeer::time(const std::string& name, const std::string& shape) {
  if (!running()) throw std::runtime_error("the PyTorch peer is not running");
  // Our own case names and shapes: letters, digits, '_', 'x' and spaces, nothing to escape.
  const std::string request = "{\"case\": \"" + name + "\", \"shape\": \"" + shape + "\"}\n";
  if (send(fd_, request.data(), request.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(request.size())) {
    throw std::runtime_error("the PyTorch peer stopped reading (asked for " + name + "/" + shape + ")");
  }
  std::string line;
  for (;;) {
    if (!read_line(line)) {
      throw std::runtime_error("the PyTorch peer ended without timing " + name + "/" + shape +
                               " (exit status " + std::to_string(finish()) + ")");
    }
    const PeerLine answer = parse_peer_line(line);
    if (answer.kind == PeerLine::Skip || answer.kind == PeerLine::Status) continue;
    if (answer.result.name != name || answer.result.shape != shape) {
      throw std::runtime_error("the PyTorch peer answered for " + answer.result.name + "/" +
                               answer.result.shape + " when asked for " + name + "/" + shape);
    }
    if (answer.kind == PeerLine::Missing) return std::nullopt;
    return answer.result;
  }
}

}  // namespace bench
