// A per-node gradient check: each node of a recorded tape is checked on its
// own, at the input values it saw, against central finite differences of its
// own forward. The report names the first node (in tape order) whose backward
// is wrong, and says how it is wrong (check/diagnose.h).
//
// Checking a node needs its forward again ("replay"). A custom op (apply())
// carries its forward. A built-in op is replayed by calling the public op again
// on its saved input values, looked up by the node's op name in a replay table
// ("mul", "sum(dim=1)", ...), with the constants the op was recorded with read
// from the node's attributes (add_scalar's c, layernorm_fused's eps); other
// files register their ops with register_replay. A node with neither is
// reported as skipped, never as passed.
//
// Run it after the forward and before backward (or after backward with
// retain_graph): a node's backward closure is gone once backward released it.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "check/diagnose.h"
#include "autograd/tape.h"

namespace ag {

// Re-records a built-in op on `tape` from constant inputs (same order as the node's).
// `node` is the original node, for ops that need a constant from it (ag::attribute(node, "eps")).
using ReplayFn = std::function<Var(Tape& tape, const std::vector<Var>& inputs, const Node& node)>;

// Adds (or replaces) the replay of op name `op`.
void register_replay(const std::string& op, ReplayFn replay);

enum class NodeStatus { Passed, Failed, Skipped };

struct NodeCheck {
  std::size_t id = 0;
  std::string op;
  NodeStatus status = NodeStatus::Skipped;
  std::string note;                 // why it was skipped, or the failed inputs' hints
  std::vector<Diagnosis> inputs;    // one per input (empty when skipped)
};

struct NodeCheckReport {
  std::vector<NodeCheck> nodes;     // every node with a backward, in tape order
  std::optional<std::size_t> first_wrong;  // tape id of the first failed node
  std::size_t skipped = 0;
  std::string summary() const;      // a table, one line per checked node
};

NodeCheckReport check_nodes(const Tape& tape, const GradcheckOptions& options = {});

}  // namespace ag
