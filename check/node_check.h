// A per-node gradient check: each node of a recorded tape is checked on its
// own, at the input values it saw, against central finite differences of its
// own forward. The report names the first node (in tape order) whose backward
// is wrong, and says how it is wrong (check/diagnose.h).
//
// Checking a node needs its forward again ("replay"). A custom op (apply())
// carries its forward. A built-in op is replayed from its row in the op table
// (check/op_table.h), looked up by the node's op name ("mul", "sum(dim=1)"),
// applied to the node's input values with the constants the node keeps as
// attributes (add_scalar's c, layernorm_fused's eps). A node with neither is
// reported as skipped, never as passed.
//
// Run it after the forward and before backward (or after backward with
// retain_graph): a node's backward closure is gone once backward released it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "autograd/custom_op.h"
#include "autograd/tape.h"
#include "check/diagnose.h"

namespace ag {

// The node's backward alone, on a scratch tape holding one leaf per input
// slot: what it sends into each slot for the output gradient dout, before
// anything else is added there. Needs the backward closure (see above).
Grads node_backward_alone(const Node& node, const Inputs& inputs, const arma::mat& dout);

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
