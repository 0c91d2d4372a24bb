// Ours and the peer, case by case, in alternating rounds (A B A B ...): the
// machine's drift over a run hits both sides of each ratio, and the spread of
// the per-round ratios shows how far a ratio can be trusted.
#pragma once

#include <functional>
#include <iosfwd>
#include <vector>

#include "bench/cases.h"
#include "bench/peer.h"
#include "bench/report.h"

namespace bench {

struct Rounds {
  std::vector<Result> ours;  // one per case, in order; time.median_s: the median of the rounds' medians
  Peer peer;                 // results and ratios of the cases the peer has; status left to the caller
};

// For each case in order: ours (A), then the peer (B), `rounds` times. A case
// the peer does not have (or no peer: nullptr) runs once, ours alone. When the
// peer fails, the failure goes in peer.status and the rest runs ours alone.
// `progress` (may be nullptr) gets a line per timing.
Rounds run_rounds(const std::vector<Case>& cases, int rounds, const std::function<Result(const Case&)>& ours,
                  PeerLink* peer, std::ostream* progress);

// The rounds of one case as one: the median of the medians, the least min and
// the largest max, every repeat counted; over the bound, the median and spread
// of each round's own ratio (0 unless every round measured a bound); GB/s and
// the rest from the first round.
Result merge_rounds(const std::vector<Result>& rounds);

}  // namespace bench
