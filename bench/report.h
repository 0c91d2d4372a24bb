// The table `autograd bench` prints, and the PyTorch peer it compares with.
#pragma once

#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "bench/cases.h"

namespace bench {

// One line of bench/peer_torch.py's output, parsed.
struct PeerResult {
  std::string name, shape;
  double median_s = 0;
  std::string note;
};

struct Peer {
  bool ran = false;
  std::string status;                        // "PyTorch 1.13.0 (python3), 1 thread" or why not
  std::map<std::string, PeerResult> results;  // by case_id
};

// Parses the peer's JSON lines ({"case": ..., "shape": ..., "median_s": ...});
// lines that are not JSON objects are skipped. Throws std::runtime_error on a
// JSON object without those fields.
Peer parse_peer(std::istream& lines);

// Runs bench/peer_torch.py with the first python that can import torch
// ($AUTOGRAD_PYTHON, python3, /usr/bin/python3). `args` go to the script,
// `env` (VAR=value ...) to its environment.
Peer run_peer(const std::string& args, const std::string& env);

// The table, and the targets checked against it.
std::string format_table(const std::vector<Result>& ours, const Peer& peer);
// shape: the LayerNorm shape the targets name (4096x768; smaller under --quick).
std::string format_targets(const std::vector<Result>& ours, const Peer& peer, const std::string& shape);

// Issue 16's targets at the large `shapes` (4000x768, 4096x768, 16384x1024):
// fused LayerNorm and RMSNorm against PyTorch's layer_norm and the bound,
// composed LayerNorm against PyTorch's composition.
std::string format_bound_targets(const std::vector<Result>& ours, const Peer& peer,
                                 const std::vector<std::string>& shapes);

// The least time r's traffic can take: its reads at the `read` row's rate plus
// its writes at the `write_nt` row's rate; 0 when r has no traffic or the
// bandwidth rows did not run. The table's "x bound" is r's median over this.
double bound_seconds(const Result& r, const std::vector<Result>& ours);

// "12.3 ms", "480 us", "1.20 s".
std::string format_seconds(double s);

}  // namespace bench
