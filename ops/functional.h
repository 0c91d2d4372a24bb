// Forward and reverse mode as functions of plain matrices, named as JAX and
// torch.func name them: jvp, vjp, jacobian, hvp, hessian.
//
// f is a TapeFunction (autograd/gradcheck.h): it records on the tape it is
// given, from inputs that arrive as leaves, and returns its output (a Var of
// another tape, or an empty one, is an ag::Error naming the function). Each call
// records f on a tape of its own; forward mode pushes tangents through that
// tape (autograd/forward.h), reverse mode runs backward on it, and
// second order runs reverse mode over the tangents (reverse-over-forward:
// grad_x (grad f(x) . v) = H v).
//
//   ag::JvpResult r = ag::jvp(f, {x}, {v});           // f(x) and J v
//   ag::Jacobian J = ag::jacobian(f, {x}, ag::Mode::Forward);  // J.passes == x.n_elem
//   std::vector<arma::mat> Hv = ag::hvp(loss, {x}, {v});
//
// Jacobians and Hessians are matrices over the elements flattened in order:
// row i is element i of the output, column j element j of the inputs joined
// one after another, each matrix read column by column (Armadillo's order).
#pragma once

#include <armadillo>

#include <cstddef>
#include <vector>

#include "autograd/forward.h"
#include "autograd/gradcheck.h"

namespace ag {

struct JvpResult {
  arma::mat output;   // f(inputs)
  arma::mat tangent;  // J v: how the output moves when inputs[k] moves along tangents[k]
};
// One tangent per input, shaped like it; an empty matrix: that input does not move.
JvpResult jvp(const TapeFunction& f, const std::vector<arma::mat>& inputs, const std::vector<arma::mat>& tangents);

struct VjpResult {
  arma::mat output;                     // f(inputs)
  std::vector<arma::mat> cotangents;    // J^T u, one per input
};
// `cotangent` u has the output's shape.
VjpResult vjp(const TapeFunction& f, const std::vector<arma::mat>& inputs, const arma::mat& cotangent);

enum class Mode {
  Forward,  // one tangent pass per input element: columns of J
  Reverse,  // one backward per output element: rows of J
};

struct Jacobian {
  arma::mat matrix;        // output elements x input elements
  std::size_t passes = 0;  // tangent passes (Forward) or backward passes (Reverse) it took
};
// f recorded once; then its tape walked once per input element (Forward) or output element (Reverse).
// An empty Jacobian (no input element, or an empty output) has its shape and takes no pass.
Jacobian jacobian(const TapeFunction& f, const std::vector<arma::mat>& inputs, Mode mode);

// H v for a scalar (1x1) f: one tangent pass records grad f . v, one backward differentiates it.
std::vector<arma::mat> hvp(const TapeFunction& f, const std::vector<arma::mat>& inputs,
                           const std::vector<arma::mat>& v);
// The Hessian of a scalar f: f recorded once, one HVP per input element (passes = that count).
// Each pass's nodes are given back (Tape::rewind) before the next: the tape
// holds f and one pass at a time, whatever the number of passes.
Jacobian hessian(const TapeFunction& f, const std::vector<arma::mat>& inputs);

// NoGrad inside f: what f records under it is a constant to every function
// here, in both modes, as jax.lax.stop_gradient is to jacfwd and jacrev and
// as torch.no_grad inside f is to torch.func.grad: jacobian's two modes agree.
// (push_tangents on a tape of your own pushes through NoGrad nodes: there
// NoGrad only means "save nothing for backward".) These are the zero seeds
// that hold each such node fixed: every node up to `output` that was recorded
// under NoGrad from an input needing a gradient. The functions above record f
// with grad enabled, so that the nodes f recorded under its own NoGrad show.
std::vector<TangentSeed> no_grad_seeds(Tape& tape, Var output);

// Total number of elements of the matrices.
std::size_t element_count(const std::vector<arma::mat>& ms);
// Matrices shaped like `shapes`, holding the flat vector v in the order above.
std::vector<arma::mat> unflatten(const arma::vec& v, const std::vector<arma::mat>& shapes);
arma::vec flatten(const std::vector<arma::mat>& ms);

}  // namespace ag
