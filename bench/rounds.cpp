#include "bench/rounds.h"

#include <algorithm>
#include <ostream>
#include <stdexcept>

namespace bench {

Result merge_rounds(const std::vector<Result>& rounds) {
  if (rounds.empty()) throw std::invalid_argument("merge_rounds: no rounds");
  Result merged = rounds.front();
  std::vector<double> medians;
  for (const Result& r : rounds) {
    medians.push_back(r.time.median_s);
    merged.time.min_s = std::min(merged.time.min_s, r.time.min_s);
    merged.time.max_s = std::max(merged.time.max_s, r.time.max_s);
  }
  merged.time.repeats = 0;
  for (const Result& r : rounds) merged.time.repeats += r.time.repeats;
  merged.time.median_s = spread_of(medians).median;
  // GB/s is bytes over the median: the same bytes over the new median.
  if (merged.time.median_s > 0) merged.gbps = rounds.front().gbps * rounds.front().time.median_s / merged.time.median_s;
  // Over the bound: each round's time over that round's bound, then their median.
  std::vector<double> over;
  for (const Result& r : rounds) {
    if (r.bound_s > 0) over.push_back(r.time.median_s / r.bound_s);
  }
  merged.bound_s = 0;
  if (over.size() == rounds.size()) {
    const Spread s = spread_of(over);
    merged.bound_s = merged.time.median_s / s.median;
    merged.over_bound_min = s.min;
    merged.over_bound_max = s.max;
  }
  return merged;
}

namespace {

// One case: A B A B ... while the peer has it; returns the peer's rounds (empty: ours alone).
std::vector<PeerResult> alternate(const Case& c, int rounds, const std::function<Result(const Case&)>& ours,
                                  PeerLink*& peer, Peer& out, std::vector<Result>& mine, std::ostream* progress) {
  std::vector<PeerResult> theirs;
  for (int round = 1; round <= rounds; ++round) {
    if (progress) *progress << "running " << case_id(c.name, c.shape) << ", round " << round << "\n";
    mine.push_back(ours(c));
    if (peer == nullptr) break;
    try {
      std::optional<PeerResult> p = peer->time(c.name, c.shape);
      if (!p) break;  // the peer has no such case: once is enough
      theirs.push_back(*p);
    } catch (const std::runtime_error& e) {
      out.status = std::string("failed, the rest ours alone: ") + e.what();
      peer = nullptr;
      break;
    }
  }
  if (theirs.size() < mine.size()) mine.resize(std::max<std::size_t>(1, theirs.size()));
  return theirs;
}

}  // namespace

Rounds run_rounds(const std::vector<Case>& cases, int rounds, const std::function<Result(const Case&)>& ours,
                  PeerLink* peer, std::ostream* progress) {
  if (rounds < 1) throw std::invalid_argument("run_rounds: rounds must be at least 1");
  Rounds out;
  for (const Case& c : cases) {
    std::vector<Result> mine;
    const std::vector<PeerResult> theirs = alternate(c, rounds, ours, peer, out.peer, mine, progress);
    out.ours.push_back(merge_rounds(mine));
    if (theirs.empty()) continue;
    std::vector<double> ratios, medians;
    for (std::size_t i = 0; i < theirs.size(); ++i) {
      ratios.push_back(mine[i].time.median_s / theirs[i].median_s);
      medians.push_back(theirs[i].median_s);
    }
    PeerResult p = theirs.front();
    p.median_s = spread_of(medians).median;
    out.peer.results[case_id(c.name, c.shape)] = p;
    out.peer.ratios[case_id(c.name, c.shape)] = spread_of(ratios);
  }
  out.peer.ran = !out.peer.results.empty();
  return out;
}

}  // namespace bench
