// Custom ops: a forward and a backward written by the user, used on the tape
// like any built-in (PyTorch's torch.autograd.Function).
//
//   ag::Function square_fn{"my_square",
//     [](const ag::Inputs& x) { return arma::mat(arma::square(x[0])); },
//     [](const ag::Inputs& x, const arma::mat& y, const arma::mat& dy) {
//       return ag::Grads{2 * x[0] % dy};
//     }};
//   ag::Var y = ag::apply(square_fn, {x});
//
// forward works on plain matrices; backward receives the inputs, the output
// and dy (shaped like the output) and returns one gradient per input (an empty
// matrix for an input that needs none). The node saves its inputs and output
// for backward, so backward may read all of them.
//
// Forward mode (autograd/forward.h) goes through a custom op only if it gives
// a jvp: a JvpFn computing the output's tangent from args.x, args.y and
// args.dx with ag ops, so that reverse mode can differentiate the tangent in
// turn (Hessian-vector products). Without one, forward mode through the node
// is refused, naming the op.
//
//   square_fn.jvp = [](const ag::JvpArgs& a) { return 2.0 * a.x[0] * a.dx[0]; };
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "autograd/tape.h"

namespace ag {

using Inputs = std::vector<arma::mat>;
using Grads = std::vector<arma::mat>;

struct Function {
  std::string name;
  std::function<arma::mat(const Inputs& inputs)> forward;
  std::function<Grads(const Inputs& inputs, const arma::mat& output, const arma::mat& doutput)> backward;
  JvpFn jvp = {};  // optional: the forward-mode rule, written with ag ops
};

// Runs f.forward on the inputs' values and records one node named f.name.
// Its backward calls f.backward and checks that it returned one gradient per
// input, each shaped like its input (an ag::Error names the op and the shapes).
Var apply(const Function& f, const std::vector<Var>& inputs);

// The backward closure of a custom node. It is a named type (not a lambda) so
// that tools can find the Function behind a node: node.backward.target<CustomBackward>().
struct CustomBackward {
  Function f;
  void operator()(Tape& tape, const Node& self) const;
};

// The Function behind a node recorded by apply(), or nullptr for other nodes
// (and for nodes whose backward already ran and was released).
const Function* custom_function(const Node& node);

}  // namespace ag
