// Forward mode on the tape: tangents pushed through nodes already recorded.
//
// A forward sweep seeds tangents on some nodes (the inputs that move), walks
// the nodes recorded after them in order, and for each node an input tangent
// reached calls the node's JVP rule (Node::jvp, from its OpDef), filling a
// zero constant for each input no tangent reached. A rule computes with ag
// ops, so every tangent is an ordinary node of the same tape, marked
// Node::tangent: reverse mode differentiates it like any value, which gives
// Hessian-vector products (reverse-over-forward: grad_x (grad f(x) . v) = H v).
//
// Under NoGrad the tangents are constants (nothing saved for backward); in
// anomaly mode a NaN or inf in a tangent throws an AnomalyError naming the
// node whose tangent it was. A node without a rule (a custom op that gave no
// JVP, an op recorded without an OpDef) is refused by name: an ag::Error.
//
//   ag::Var y = f(x);                                      // recorded as usual
//   ag::Var dy = ag::push_tangents(y, {{x, tape.constant(v)}});  // J v, on the tape
#pragma once

#include <vector>

#include "autograd/tape.h"

namespace ag {

// One seed: node `at` moves along `tangent` (a Var of the same tape and shape).
struct TangentSeed {
  Var at;
  Var tangent;
};

// The tangents of `outputs` (one each, in order) when the seeds move; an
// output no seed reaches gets a zero constant. A node may be seeded once; a
// seeded node keeps its seed (tangents from earlier seeds do not flow into it).
std::vector<Var> push_tangents(const std::vector<Var>& outputs, const std::vector<TangentSeed>& seeds);
Var push_tangents(Var output, const std::vector<TangentSeed>& seeds);

// Seeds for parameters: every node of `tape` that read params[k] (tape.param)
// moves along tangents[k], shaped like the parameter. What a module's forward
// is pushed with to differentiate along its weights.
std::vector<TangentSeed> parameter_seeds(Tape& tape, const std::vector<Parameter*>& params,
                                         const std::vector<arma::mat>& tangents);

// Marks every node recorded while alive as a tangent (Node::tangent).
class TangentScope : TapeFlagScope {
 public:
  explicit TangentScope(Tape& tape)
      : TapeFlagScope(tape, &Tape::recording_tangents, &Tape::set_recording_tangents, true) {}
};

}  // namespace ag
