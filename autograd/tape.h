// The tape: a Wengert list of the operations one computation ran, in order.
//
// A Var is a handle (tape + index) to one recorded value. Every op in ops/
// computes its forward with Armadillo and calls Tape::record with a closure
// that adds (+=) its vector-Jacobian product into its inputs' gradients.
// Tape::backward seeds the output and walks the list in reverse: no recursion,
// no graph search, so a 100,000-node chain is as safe as a 3-node one.
//
// How long a reference lives: nodes never move (autograd/stable_vector.h), so
// a reference returned by Var::value(), Var::grad(), Tape::value(id) or
// Tape::node(id) stays valid, however many nodes are recorded after it, until
// clear(), a rewind() to before its node, or the tape's destruction. The
// matrix it refers to changes only when a gradient does: a later backward
// replaces intermediate gradients.
//
// Backward is walked, never changed: a backward closure may only accumulate
// into its inputs' gradients. Recording a node, clearing the tape or starting
// another backward from inside a backward throws an ag::Error naming the node.
// A forward-mode rule (JvpFn) records its tangent's nodes, but clearing or
// rewinding the tape from inside one throws too: it would destroy the rule
// while it runs.
//
// How long a Var lives: until its tape is cleared or destroyed, or rewound to
// before its node. Using it later throws an ag::Error that says which of
// these happened. A Var checks through
// its tape's token (a pair of counters in a pool that is never freed), so it
// never reads a tape that is gone: one load on the hot path, no reference count.
#pragma once

#include <armadillo>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/error.h"
#include "autograd/parameter.h"
#include "autograd/stable_vector.h"

namespace ag {

class Tape;

// "3x4": how every message and listing prints a shape.
std::string shape_str(const arma::mat& m);
std::string shape_str(arma::uword rows, arma::uword cols);

// Whether a tape is alive: its current generation and the one it was built with.
// Generations are unique in the process (one counter for all tapes), so a token
// reused by a later tape never matches a Var of an earlier one.
struct TapeToken;

// A handle to one value on a tape. Cheap to copy; valid until the tape is cleared or destroyed.
struct Var {
  Tape* tape = nullptr;
  std::size_t id = 0;
  std::uint64_t generation = 0;  // which clear() of the tape it belongs to (64 bits: never wraps)
  const TapeToken* token = nullptr;

  // Throws naming `what` unless the tape is alive and not cleared since this Var was recorded.
  void check_live(const char* what) const;

  const arma::mat& value() const;
  const arma::mat& grad() const;  // d(output)/d(this) after backward
  double item() const;            // the value of a 1x1 Var
  arma::uword rows() const { return value().n_rows; }
  arma::uword cols() const { return value().n_cols; }
  std::string shape() const { return shape_str(value()); }
};

struct Node;

// A constant an op was recorded with (add_scalar's c, pow_scalar's p, a fused
// LayerNorm's eps): shown in listings, read back by tools that replay a node.
struct Attribute {
  const char* name;  // a string literal
  double value;
};

// The vector-Jacobian product of one node. `self.grad` is dout (shaped like
// self.value); the closure calls tape.accumulate(self.inputs[k], contribution)
// for each input, reading saved values through tape.value(id) and self.value.
using BackwardFn = std::function<void(Tape& tape, const Node& self)>;

// What a node keeps for its backward: input values it reads, its own output,
// and tensors the closure owns (counted in bytes). Reported by saved_bytes().
struct Saved {
  std::vector<Var> inputs;
  bool output = false;
  std::size_t extra_bytes = 0;

  // The backward reads the node's own output only (exp, sqrt, sigmoid, softmax: y' in terms of y).
  static Saved output_only() { return Saved{{}, true}; }
};

// What a forward-mode rule (a Jacobian-vector product) sees: the node, its
// inputs and output as Vars, and one tangent per input, shaped like that input
// (a zero constant for an input no tangent reached). The rule returns the
// output's tangent, computed with ag ops, so the tangent is recorded on the
// same tape like any value and reverse mode can differentiate it in turn
// (reverse-over-forward: Hessian-vector products).
struct JvpArgs {
  Tape& tape;
  const Node& node;      // its attributes: attribute(node, "eps")
  std::vector<Var> x;    // the node's inputs, in argument order
  Var y;                 // the node's output
  std::vector<Var> dx;   // one tangent per input
};
using JvpFn = std::function<Var(const JvpArgs& args)>;

// What an op is, said once beside its code in ops/: the name its nodes carry,
// how many inputs it takes, its formulas as docs/op-table.md prints them and
// its forward-mode rule. ops/ defines one per op; tools read them (the op
// table in check/, listings, error messages).
struct OpDef {
  const char* name;      // Node::op: "add", "sum(dim=1)"
  int arity;             // number of inputs; -1: any number (hcat of a list)
  const char* forward;   // "y = a + b"
  const char* backward;  // "da = dy, db = dy"
  const char* tangent;   // "dy = da + db": the forward-mode rule as text
  JvpFn jvp;             // empty: forward mode through the op is refused, naming it
};

// An op composed of other ops (softmax_composed, gelu, the losses): the tape derives its
// backward from theirs, and its tangent too. `backward` says from which ops, or what comes out.
inline OpDef composed_op(const char* name, int arity, const char* forward, const char* backward) {
  return {name, arity, forward, backward, "derived by the tape from its ops' rules", {}};
}

struct Node {
  std::string op;                     // "mul", "matmul", "leaf", "param:fc1.weight" ...
  const OpDef* def = nullptr;         // the op recorded through record(def, ...); null for leaves
  JvpFn jvp;                          // its forward-mode rule (def->jvp unless the op passed its own)
  bool tangent = false;               // recorded by a forward-mode pass: a tangent, not a primal value
  std::vector<std::size_t> inputs;    // node ids, in argument order
  std::vector<std::size_t> saved;     // node ids whose values backward reads
  std::size_t extra_saved_bytes = 0;  // tensors the closure owns (mean, rstd, masks)
  std::vector<Attribute> attributes;  // the op's constants, e.g. {"eps", 1e-5}
  arma::mat value;
  mutable arma::mat grad;             // empty until a gradient reaches it (Tape::grad, const, reads it as zeros)
  BackwardFn backward;                // empty for leaves and constants
  std::weak_ptr<ParameterState> param;  // parameter leaves write their gradient here
  bool is_param = false;
  bool requires_grad = false;
  bool freed = false;                 // backward already ran and released the closure
  bool grad_freed = false;            // its gradient was freed after its backward (keep_intermediate_grads)

  // Empties the node for reuse by the next computation, keeping the id lists' capacity.
  void reset();
};

class Tape {
 public:
  Tape();  // changes no process-wide setting (the memory policy is opt-in: autograd/memory.h)
  ~Tape();  // its Vars become invalid (using one throws)
  Tape(const Tape&) = delete;  // Vars point at their tape
  Tape& operator=(const Tape&) = delete;

  // Leaves. `leaf` needs a gradient, `constant` does not; `param` reads a
  // Parameter's value and, on backward, adds into the Parameter's gradient.
  // A Parameter's value is copied onto the tape, so changing the parameter
  // afterwards (an optimizer step) changes neither this tape's values nor its
  // gradients: backward differentiates at the values the forward saw.
  Var leaf(arma::mat value, std::string name = "leaf");
  Var leaf(double value, std::string name = "leaf");  // a 1x1 leaf: tape.leaf(2.0)
  // Rows in braces: tape.leaf({{1, 2}, {3, 4}}), tape.leaf({{-4.0}}), tape.leaf({{1}, {2}})
  // (Armadillo's own constructor finds the last two ambiguous).
  Var leaf(std::initializer_list<std::initializer_list<double>> rows, std::string name = "leaf");
  Var constant(arma::mat value, std::string name = "const");
  Var constant(double value, std::string name = "const");
  Var constant(std::initializer_list<std::initializer_list<double>> rows, std::string name = "const");
  Var param(Parameter& p);

  // Used by ops: record one node with its backward and what that backward reads.
  // The node always keeps its inputs' ids (forward mode walks them, even under
  // NoGrad or when no input needs a gradient); its backward and saved tensors
  // only when a gradient can flow (an input requires one and grad is enabled).
  // `jvp`: the op's forward-mode rule (a custom op's own; empty: none).
  Var record(std::string op, const std::vector<Var>& inputs, arma::mat value,
             BackwardFn backward, const Saved& saved = {}, JvpFn jvp = {});
  // The same for an op described by an OpDef: the node carries def's name and
  // forward-mode rule, or `jvp` when the op passes its own (one that captures
  // what its backward captures: indices, masks). Refuses a wrong input count.
  Var record(const OpDef& def, const std::vector<Var>& inputs, arma::mat value,
             BackwardFn backward, const Saved& saved = {}, JvpFn jvp = {});

  // A Var for node `id` of this tape, as recorded (throws for an id past the end).
  Var var(std::size_t id) const;

  // Used by ops after record: note a constant the op was called with.
  void set_attribute(Var v, const char* name, double value);

  // Used by backward closures: grad[id] += g, with a shape check that names the node.
  void accumulate(std::size_t id, const arma::mat& g);
  // The same for a gradient the closure no longer needs (a temporary, or std::move(dx)):
  // the first gradient to reach a node is moved in instead of copied.
  void accumulate(std::size_t id, arma::mat&& g);
  // grad[id] block at (row, col) += g: the backward of a slice (rows, cols) adds
  // its gradient where the slice came from, with no zero matrix of the input's
  // size per slice. The first block to reach a node starts its gradient at zeros.
  void accumulate_block(std::size_t id, arma::uword row, arma::uword col, const arma::mat& g);
  // The running node's own gradient, for its closure's last read of it (add's db = dy):
  // moved out when the tape keeps no intermediate gradients, since the reverse pass
  // frees it right after the closure anyway; a copy otherwise (and when `self` is not
  // the node whose backward is running). Saves a copy of dy per pass-through op.
  arma::mat take_grad(const Node& self);

  // Back-propagate from a 1x1 output (seed 1) or from any output with an
  // explicit output gradient of its shape. Leaves accumulate (+=) across
  // calls; intermediate gradients are recomputed. Closures are released
  // afterwards unless retain_graph is set.
  void backward(Var output, bool retain_graph = false);
  void backward(Var output, const arma::mat& doutput, bool retain_graph = false);
  // The same, taking over an output gradient the caller no longer needs
  // (std::move(dy) or a temporary) instead of copying it.
  void backward(Var output, arma::mat&& doutput, bool retain_graph = false);

  // Where backward puts a parameter's gradient. By default it adds into the
  // Parameter (under its lock). With keep_param_grads(true) it stays on this
  // tape, accumulating over backward calls, until add_param_grads() adds each
  // parameter node's gradient into its Parameter, in node order, and empties it:
  // several tapes on several threads, added in a fixed order, give the same
  // bits whatever the threads did (train/shards.h).
  void keep_param_grads(bool on) { keep_param_grads_ = on; }
  void add_param_grads();

  // Whether backward keeps the gradient of every intermediate node, so that
  // Var::grad() shows each number on the way (the default). Off, a node's
  // gradient is freed as soon as its own backward has run, as PyTorch does
  // for non-leaf tensors: the freed memory, still in cache, holds the next
  // gradients. Leaf and parameter gradients are kept either way, and so are
  // the results, to the bit. Reading a freed gradient throws, naming the
  // node. The training loop turns it off (train/shards.cpp): the default
  // GPT's step keeps 42.6 MB of gradients otherwise, as much as its values.
  void keep_intermediate_grads(bool on) { keep_intermediate_grads_ = on; }

  // Forget every node. Vars from before become invalid (using one throws).
  void clear();

  // Forget the nodes recorded after the first `mark` (a size() taken earlier):
  // a pass that is done with its nodes gives them back (ops/functional.cpp's
  // hessian runs n passes on top of one recording of f). Vars, references and
  // gradients of the nodes kept stay valid; those of the nodes dropped become
  // invalid, as after clear(). A gradient kept on a dropped parameter node
  // (keep_param_grads) is dropped with it.
  std::size_t mark() const { return size(); }
  void rewind(std::size_t mark);

  std::size_t size() const { return nodes_.size(); }
  // Bytes held for backward: distinct saved tensors plus what closures own.
  std::size_t saved_bytes() const;
  // The same for nodes first.. only, counting only tensors recorded from first
  // on: what a piece of a graph added, not the inputs it refers to.
  std::size_t saved_bytes_since(std::size_t first) const;
  // What node id holds on its own (its saved tensors + extras), shared or not.
  std::size_t node_saved_bytes(std::size_t id) const;
  const Node& node(std::size_t id) const;         // throws for an id past the end
  const arma::mat& value(std::size_t id) const { return nodes_[id].value; }
  const arma::mat& value(Var v) const;
  const arma::mat& grad(Var v) const;

  bool grad_enabled() const { return grad_enabled_; }
  void set_grad_enabled(bool on) { grad_enabled_ = on; }
  bool anomaly_mode() const { return anomaly_; }
  void set_anomaly_mode(bool on) { anomaly_ = on; }
  // While on, every node recorded is marked Node::tangent (a forward-mode
  // pass sets it: autograd/forward.h's TangentScope).
  bool recording_tangents() const { return recording_tangents_; }
  void set_recording_tangents(bool on) { recording_tangents_ = on; }
  // The node whose JVP rule is running (autograd/forward.cpp sets it around
  // the call; kNoNode: none): clear() and rewind() name it and refuse.
  static constexpr std::size_t kNoNode = static_cast<std::size_t>(-1);
  std::size_t running_jvp() const { return running_jvp_; }
  void set_running_jvp(std::size_t id) { running_jvp_ = id; }

  void check(const Var& v, const char* what) const;  // throws if v is not of this tape, now

 private:
  Node& new_node(std::string op, arma::mat value);  // appended in place, no Node temporaries
  Var finish_node();                                // the anomaly check, then the new node's Var
  void refuse_inside_backward(const char* what, const std::string& op = "") const;
  void refuse_inside_jvp(const char* call) const;
  bool kept_by_rewinds(std::uint64_t generation, std::size_t id) const;
  Node* gradient_target(std::size_t id, const arma::mat& g);  // checks g; null if id needs no gradient
  void refuse_non_finite(const Node& n, std::size_t id, const arma::mat& g) const;  // in anomaly mode
  Node& start_backward(Var output, const arma::mat& doutput);  // checks; resets this pass's gradients
  void finish_backward(std::size_t output, bool retain_graph);
  void run_backward(std::size_t output);
  void add_to_parameter(Node& n, std::size_t id);

  TapeToken* token_;  // what this tape's Vars check (never freed)
  StableVector<Node> nodes_;  // in execution order; never moved, reused after clear()
  std::uint64_t generation_ = 0;
  bool grad_enabled_ = true;
  bool anomaly_ = false;
  bool recording_tangents_ = false;
  bool keep_param_grads_ = false;
  bool keep_intermediate_grads_ = true;
  bool in_backward_ = false;
  std::size_t current_node_ = 0;  // the node whose backward is running
  std::size_t running_jvp_ = kNoNode;
  // The generations rewind() ended since the last clear(), oldest first: a Var
  // of generation g in [first, last] is still valid while its id < kept.
  struct Rewound {
    std::uint64_t first, last;
    std::size_t kept;
  };
  std::vector<Rewound> rewound_;
};

// The value of node's attribute `name`; throws naming the op when it has none.
double attribute(const Node& node, const char* name);

// "'mul' (node 3, 2x2)": how messages name a node; "'mul' (tangent node 9, 2x2)" for a tangent.
std::string node_name(const Node& node, std::size_t id);

// "add_scalar c=2.5": the op name followed by its attributes.
std::string op_label(const Node& node);

// The tape an op records on; throws naming the op when its inputs live on different tapes.
Tape& tape_of(const char* op, Var a);
Tape& tape_of(const char* op, Var a, Var b);

// The one scope guard for a tape's flags: sets one to `value` while alive and
// restores what it was, however the scope is left. NoGrad, TangentScope
// (autograd/forward.h) and masked_fill's pause of anomaly mode are its uses.
class TapeFlagScope {
 public:
  using Get = bool (Tape::*)() const;
  using Set = void (Tape::*)(bool);
  TapeFlagScope(Tape& tape, Get get, Set set, bool value) : tape_(tape), set_(set), previous_((tape.*get)()) {
    (tape_.*set_)(value);
  }
  ~TapeFlagScope() { (tape_.*set_)(previous_); }
  TapeFlagScope(const TapeFlagScope&) = delete;
  TapeFlagScope& operator=(const TapeFlagScope&) = delete;

 private:
  Tape& tape_;
  Set set_;
  bool previous_;
};

// Records no backward while alive: results are constants, nothing is saved.
class NoGrad : TapeFlagScope {
 public:
  explicit NoGrad(Tape& tape) : TapeFlagScope(tape, &Tape::grad_enabled, &Tape::set_grad_enabled, false) {}
};

}  // namespace ag
