// The table `autograd bench` prints, and the PyTorch peer it compares with.
#pragma once

#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "bench/cases.h"
#include "bench/peer.h"

namespace bench {

// What the peer timed, by case_id: its median (over the rounds) and the spread
// of ours / its time over the rounds (bench/rounds.h).
struct Peer {
  bool ran = false;
  std::string status;                        // "PyTorch 1.13.0 (python3), 1 thread" or why not
  std::map<std::string, PeerResult> results;  // by case_id
  std::map<std::string, Spread> ratios;       // by case_id; absent: ours / results' median
};

// Ours / the peer for r: the median of the per-round ratios when the rounds
// gave them, else r's median over the peer's; -1 when the peer has no such case.
double peer_ratio(const Result& r, const Peer& peer);

// The table, and the performance targets (bench/README.md) checked against it.
std::string format_table(const std::vector<Result>& ours, const Peer& peer);
// shape: the LayerNorm shape the targets name (4096x768; smaller under --quick).
std::string format_targets(const std::vector<Result>& ours, const Peer& peer, const std::string& shape);

// The targets at the large `shapes` (4000x768, 4096x768, 16384x1024):
// fused LayerNorm and RMSNorm against PyTorch's layer_norm and the bound,
// composed LayerNorm against PyTorch's composition.
std::string format_bound_targets(const std::vector<Result>& ours, const Peer& peer,
                                 const std::vector<std::string>& shapes);

// r's time over its measured bound (Result::bound_s): the median of the
// rounds' ratios after merge_rounds; -1 when r has no bound.
double over_bound(const Result& r);

// "12.3 ms", "480 us", "1.20 s".
std::string format_seconds(double s);

}  // namespace bench
