// The PyTorch peer of `autograd bench`: bench/peer_torch.py --serve, one
// process for the whole run, asked to time one case at a time so that ours and
// its timings of a case alternate (bench/rounds.h).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/child_process.h"

namespace bench {

// The spread of a figure over the rounds: min, median, max (rounds: how many).
struct Spread {
  double min = 0, median = 0, max = 0;
  int rounds = 0;
};
// Throws std::invalid_argument on no values.
Spread spread_of(std::vector<double> values);

// One line of bench/peer_torch.py's output, parsed.
struct PeerResult {
  std::string name, shape;
  double median_s = 0;
  std::string note;
};

// What a line of the peer says.
struct PeerLine {
  enum Kind { Skip, Status, Timed, Missing } kind = Skip;
  std::string status;  // Status: "PyTorch 1.13.0, 1 thread"; Missing: why
  PeerResult result;   // Timed (Missing: name and shape)
};

// Parses one line: {"peer": ...} (Status), {"case", "shape", "median_s", "note"}
// (Timed) or {"case", "shape", "missing"} (Missing); a line that is not a JSON
// object is Skip (a warning). Throws std::runtime_error on a JSON object
// without those fields or with a median_s that is not a number.
PeerLine parse_peer_line(const std::string& line);

// Something that times a case on request: the real peer, or a test's fake.
class PeerLink {
 public:
  virtual ~PeerLink() = default;
  // The case's timing, or nothing when the peer has no such case. Throws
  // std::runtime_error when the peer cannot answer (it died, it said nonsense).
  virtual std::optional<PeerResult> time(const std::string& name, const std::string& shape) = 0;
};

// bench/peer_torch.py --serve ARGS, run by the first python that can import
// torch ($AUTOGRAD_PYTHON, python3, /usr/bin/python3) with `env` (VAR=value
// ...) in its environment, one thread. Talks over a socket pair: a request
// line in, an answer line out. Every wait on it is bounded (bench/child_process.h):
// the probe for torch 60 s, its first line 120 s, each answer 600 s, its exit
// 30 s, or all of them $AUTOGRAD_PEER_TIMEOUT seconds; past the limit the
// process is killed and the call says so (a std::runtime_error, or status()).
class TorchPeer : public PeerLink {
 public:
  // Starts nothing when no python can import torch: running() is false and
  // status() says why. Throws std::runtime_error when the process cannot start
  // or its first line is not {"peer": ...}.
  TorchPeer(const std::string& args, const std::string& env);
  ~TorchPeer() override;  // closes the socket (end of input) and waits for the process
  TorchPeer(const TorchPeer&) = delete;
  TorchPeer& operator=(const TorchPeer&) = delete;

  bool running() const { return child_ != nullptr && child_->running(); }
  const std::string& status() const { return status_; }
  // Why finish() returned non-zero when it had to stop the process, else "".
  const std::string& error() const { return error_; }
  std::optional<PeerResult> time(const std::string& name, const std::string& shape) override;
  // Closes the socket and waits: the process's exit status (0: it ended cleanly;
  // -1 when it had to be stopped, error() says why).
  int finish();

 private:
  // false at the end of the peer's output; throws when nothing came within `seconds`.
  bool read_line(std::string& line, double seconds, const std::string& what);
  int fd_ = -1;
  std::unique_ptr<ChildProcess> child_;
  std::string status_, error_, pending_;
};

// The python that can import torch, or "" (and why not in `why`).
std::string find_torch_python(std::string& why);

}  // namespace bench
