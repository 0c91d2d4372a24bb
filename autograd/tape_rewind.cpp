// Giving nodes back: rewind() to a mark, and what a Var of a generation that
// a rewind ended may still read. Split from tape.cpp, which records; both are
// the one class Tape.
#include <algorithm>

#include "autograd/tape.h"
#include "autograd/tape_token.h"

namespace ag {

// A rule that cleared or rewound would destroy itself (the node holds it) and
// the inputs it reads while it runs.
void Tape::refuse_inside_jvp(const char* call) const {
  if (running_jvp_ == kNoNode) return;
  throw Error(std::string(call) + ": called inside the JVP rule of " + node_name(nodes_[running_jvp_], running_jvp_) +
              "; a JVP rule computes its tangent with ag ops on the tape, and may record nodes but not clear "
              "or rewind the tape it is pushed on");
}

void Tape::rewind(std::size_t mark) {
  refuse_inside_backward("rewound the tape");
  refuse_inside_jvp("rewind");
  if (mark > nodes_.size()) {
    throw Error("rewind: mark " + std::to_string(mark) + " is past the end of a tape of " +
                std::to_string(nodes_.size()) + " nodes");
  }
  if (mark == nodes_.size()) return;  // nothing to give back: every Var stays as it is
  while (nodes_.size() > mark) nodes_.pop_back();
  // Earlier generations keep no more than this generation does. Consecutive
  // rewinds to one mark (a loop of passes) share one entry: memory O(1) in passes.
  for (Rewound& r : rewound_) r.kept = std::min(r.kept, mark);
  if (!rewound_.empty() && rewound_.back().kept == mark) {
    rewound_.back().last = generation_;
  } else {
    rewound_.push_back({generation_, generation_, mark});
  }
  // A new generation: a Var of a dropped node never reads the node recorded in its place.
  generation_ = next_generation();
  token_->generation.store(generation_, std::memory_order_release);
}

// Generations only grow, so the entries are sorted by them: a binary search.
bool Tape::kept_by_rewinds(std::uint64_t generation, std::size_t id) const {
  auto it = std::upper_bound(rewound_.begin(), rewound_.end(), generation,
                             [](std::uint64_t g, const Rewound& r) { return g < r.first; });
  if (it == rewound_.begin()) return false;
  --it;
  return generation <= it->last && id < it->kept;
}

}  // namespace ag
