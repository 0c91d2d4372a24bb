// The op table: one row per op, keyed by exactly the name the op records as
// Node::op, like PyTorch's derivatives.yaml. What an op is (its name, arity,
// forward, backward and forward-mode formulas and its JVP rule) is said once,
// in its OpDef beside its code in ops/; a row points at that def and adds only
// what checking needs: what each input must hold (its Domain), the shapes
// gradcheck runs it on, the constants it is recorded with (the node's
// attributes) and how to apply it. Everything that needs the list of ops reads
// this one: the gradcheck and JVP tests and `autograd gradcheck`, the per-node
// check (to replay a node), the fuzzer (to draw ops) and docs/op-table.md.
// Adding an op is one function and its OpDef in ops/ and one row in op_table.cpp.
//
// Composed functions (layernorm_composed, c / a, ...) record only nodes of the
// rows above and no node of their own. They sit in a second list, composites(),
// gradchecked and listed like the ops, but a Node never carries their name.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "autograd/gradcheck.h"
#include "autograd/rng.h"
#include "autograd/tape.h"
#include "ops/broadcast.h"

namespace ag {

// What an input must hold for the op to be differentiable there, with finite
// differences that mean something. A domain both draws values (gradcheck's
// inputs) and says whether values the fuzzer already has qualify (accepts).
enum class Domain {
  Any,           // anything finite                              drawn in [-2, 2]
  Positive,      // >= 0.25: log, sqrt                           drawn in [0.5, 2]
  PowerBase,     // Positive, unless the power p is whole and > 0 drawn in [0.5, 2]
  AwayFromZero,  // |x| >= 0.3: divisors                         drawn with |x| in [0.5, 2]
  Kink,          // |x| >= 0.01: relu's differences never straddle its kink; drawn as AwayFromZero
  ExpInput,      // <= 4.6, so exp stays below 100               drawn in [-2, 2]
  MaxGap,        // the two largest along dim differ by >= 0.01  drawn in [-2, 2]
  TwoAlong,      // at least 2 values along dim (unbiased var)   drawn in [-2, 2]
  Spread,        // variance along dim >= 0.01 (LayerNorm's x: rstd stays <= 10); drawn in [-2, 2]
  Scale,         // mean square along dim >= 0.01 (RMSNorm's x)  drawn in [-2, 2]
};

// How the inputs' shapes relate. The gradcheck cases obey it; the fuzzer picks
// operands by it.
enum class Shapes {
  One,         // a single input of any shape
  Broadcast,   // two inputs, equal along each dimension or 1 (ops/broadcast.h); also
               // hcat and vcat, which refuse the pairs that do not join
  Matmul,      // a's columns = b's rows
  PerFeature,  // x, then parameters of shape 1 x (x's columns): gamma, beta
};

// A constant the op is called with. An op keeps it as its node's attribute
// `name` (ag::attribute), so the per-node check replays the node with it.
struct Constant {
  const char* name;             // "c", "p", "eps"
  double value;                 // what gradcheck uses
  std::vector<double> choices;  // what the fuzzer draws from (empty: always value)
};

// One gradient check: a shape per input. The sizes above 1 are distinct
// numbers (3, 4, 2, 5), so each stands for one dimension (N, D, K ...) and the
// empty-shape test can set one of them to 0 everywhere it occurs.
struct GradcheckCase {
  std::string label;          // "" or "row broadcast": printed as "add (row broadcast)"
  std::vector<Shape> shapes;
};

// Records the op (a composite: its nodes) on the tape its inputs live on; the
// constants come in the order of OpRow::constants.
using ApplyFn = std::function<Var(const std::vector<Var>& inputs, const std::vector<double>& constants)>;

struct OpRow {
  const OpDef* def = nullptr;        // from ops/: name, arity, formulas, forward-mode rule
  std::string name;                  // def->name, the Node::op name: "add", "sum(dim=1)", "add_scalar"
  std::string note;                  // what the cases fix, printed after the forward formula ("" if nothing)
  std::vector<Domain> inputs;        // one per input, in argument order
  Shapes shapes = Shapes::One;
  int dim = -1;                      // the dim a reduction or norm works along; -1: none
  std::vector<Constant> constants;
  std::vector<GradcheckCase> cases;  // at least one
  ApplyFn apply;
  // The result's shape from the inputs' shapes, for the rows the empty-shape
  // test's rule (each size above 1 is one dimension) cannot describe: the
  // widths of a concatenation add up. Empty: that rule.
  std::function<Shape(const std::vector<Shape>& inputs)> result_shape = {};
};

// The ops: one row per name a Node may carry (leaves, constants and params aside).
const std::vector<OpRow>& op_table();
// Functions composed of the ops; they record no node of their own.
const std::vector<OpRow>& composites();
// The row of op_table() whose name is `node_op`, or nullptr.
const OpRow* find_op(const std::string& node_op);
// Every row, the ops first, then the composites: what gradcheck runs.
std::vector<const OpRow*> all_rows();
// The row (op or composite) called `name`; an ag::Error naming it when there is none.
const OpRow& row_named(const std::string& name);

// Each constant's gradcheck value, in order.
std::vector<double> default_constants(const OpRow& row);
// The row applied with its default constants, as gradcheck takes it.
TapeFunction tape_function(const OpRow& row);

// "add (row broadcast)"
std::string case_name(const OpRow& row, const GradcheckCase& c);
// "3x4, 1x4"
std::string shapes_str(const GradcheckCase& c);

// Values inside `domain`, reproducible from the generator's state.
arma::mat draw(Domain domain, Shape shape, Rng& rng);
// One drawn matrix per input of case `c`.
std::vector<arma::mat> make_inputs(const OpRow& row, const GradcheckCase& c, Rng& rng);
// Whether `x` may be input k of the row, applied with `constants`.
bool accepts(const OpRow& row, std::size_t k, const arma::mat& x, const std::vector<double>& constants);

// "y_k = row index_k of the table  (K x D); here index_k = 2k mod N, K = 5": the
// def's forward formula and the row's note.
std::string forward_text(const OpRow& row);

// The op table and the composites as docs/op-table.md shows them (`autograd gradcheck --markdown`).
std::string op_table_markdown();

}  // namespace ag
