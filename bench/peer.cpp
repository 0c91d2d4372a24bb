#include "bench/peer.h"

#include "bench/child_process.h"
#include "data/resources.h"

// Boost 1.74's JSON parser still includes the old <boost/bind.hpp>, which prints a
// deprecation note on every build unless this keeps its global placeholders.
#define BOOST_BIND_GLOBAL_PLACEHOLDERS
#include <boost/property_tree/json_parser.hpp>
#include <boost/property_tree/ptree.hpp>

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <stdexcept>

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

namespace {

// How long each wait on the peer may take unless $AUTOGRAD_PEER_TIMEOUT says:
// importing torch from a cold disk takes seconds, one case's timing (its
// repeats and warm-up, a cache eviction before each) well under a minute.
constexpr double kProbeSeconds = 60, kStartSeconds = 120, kAnswerSeconds = 600, kExitSeconds = 30;
constexpr std::size_t kMaxLine = 1 << 20;

std::string seconds_text(double s) {
  std::ostringstream os;
  os << s;
  return os.str() + " s";
}

}  // namespace

std::string find_torch_python(std::string& why) {
  std::vector<std::string> pythons;
  if (const char* env = std::getenv("AUTOGRAD_PYTHON")) pythons.push_back(env);
  pythons.push_back("python3");
  pythons.push_back("/usr/bin/python3");
  const double limit = peer_timeout(kProbeSeconds);
  std::string hung;
  for (const std::string& py : pythons) {
    ChildProcess probe("exec '" + py + "' -c 'import torch' </dev/null >/dev/null 2>&1", -1);
    const std::optional<int> status = probe.wait_for(limit);
    if (status == 0) return py;
    if (!status) {
      probe.stop();
      hung += py + " did not finish importing torch within " + seconds_text(limit) + " (stopped it); ";
    }
  }
  why = hung + "no python3 here can import torch (apt-get install -y python3-torch): ours alone";
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
  try {
    child_ = std::make_unique<ChildProcess>(command, fds[1]);
  } catch (const std::runtime_error& e) {
    close(fds[0]);
    close(fds[1]);
    throw std::runtime_error(std::string("the PyTorch peer did not start: ") + e.what());
  }
  close(fds[1]);
  fd_ = fds[0];
  PeerLine first;
  std::string line;
  const double limit = peer_timeout(kStartSeconds);
  while (first.kind == PeerLine::Skip && read_line(line, limit, "its first line, what it is")) first = parse_peer_line(line);
  if (first.kind != PeerLine::Status) {
    const int status = finish();
    throw std::runtime_error("the PyTorch peer (" + command + ") did not say what it is (exit status " +
                             std::to_string(status) + ")");
  }
  status_ = first.status + " (" + py + ")";
}

TorchPeer::~TorchPeer() { finish(); }

int TorchPeer::finish() {
  if (!running()) return -1;
  close(fd_);  // the end of its input: it exits
  fd_ = -1;
  double limit = kExitSeconds;  // finish() runs in the destructor: it must not throw
  try {
    limit = peer_timeout(kExitSeconds);
  } catch (const std::runtime_error&) {
  }
  const std::optional<int> status = child_->wait_for(limit);
  if (!status) error_ = "the PyTorch peer did not exit within " + seconds_text(limit) + " of the end of its input (stopped it)";
  child_.reset();  // stops it if it still runs
  return status.value_or(-1);
}

bool TorchPeer::read_line(std::string& line, double seconds, const std::string& what) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  for (;;) {
    const std::size_t newline = pending_.find('\n');
    if (newline != std::string::npos) {
      line = pending_.substr(0, newline);
      pending_.erase(0, newline + 1);
      return true;
    }
    const double left = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    if (pending_.size() > kMaxLine || !wait_readable(fd_, left)) {
      const std::string why = pending_.size() > kMaxLine ? "sent a line of over 1 MB" : "did not answer within " + seconds_text(seconds);
      close(fd_);
      fd_ = -1;
      child_.reset();  // kills its process group
      throw std::runtime_error("the PyTorch peer " + why + " (" + what + "); stopped it (AUTOGRAD_PEER_TIMEOUT=SECONDS sets the wait)");
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
  // MSG_DONTWAIT: a peer that stopped reading fills the socket, and that is an error, not a wait.
  if (send(fd_, request.data(), request.size(), MSG_NOSIGNAL | MSG_DONTWAIT) != static_cast<ssize_t>(request.size())) {
    throw std::runtime_error("the PyTorch peer stopped reading (asked for " + name + "/" + shape + ")");
  }
  std::string line;
  const double limit = peer_timeout(kAnswerSeconds);
  for (;;) {
    if (!read_line(line, limit, "asked for " + name + "/" + shape)) {
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
