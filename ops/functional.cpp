#include "ops/functional.h"

#include <string>

#include "ops/elementwise.h"

namespace ag {

namespace {

std::vector<Var> leaves_of(Tape& tape, const std::vector<arma::mat>& inputs) {
  std::vector<Var> leaves;
  for (std::size_t k = 0; k < inputs.size(); ++k) leaves.push_back(tape.leaf(inputs[k], "input " + std::to_string(k)));
  return leaves;
}

// Leaves accumulate their gradients across backward calls; an intermediate's
// gradient is recomputed by each. Passes that run backward several times on one
// tape read the gradients of these exact copies (y = 1 * x) instead.
std::vector<Var> fresh_views(const std::vector<Var>& leaves) {
  std::vector<Var> views;
  for (const Var& x : leaves) views.push_back(mul_scalar(x, 1.0));
  return views;
}

void check_like(const char* what, const std::vector<arma::mat>& inputs, const std::vector<arma::mat>& v,
                bool empty_allowed) {
  if (v.size() != inputs.size()) {
    throw Error(std::string(what) + ": " + std::to_string(v.size()) + " tangents for " +
                std::to_string(inputs.size()) + " inputs (one per input)");
  }
  for (std::size_t k = 0; k < v.size(); ++k) {
    if (empty_allowed && v[k].is_empty()) continue;
    if (arma::size(v[k]) != arma::size(inputs[k])) {
      throw Error(std::string(what) + ": the tangent of input " + std::to_string(k) + " is " + shape_str(v[k]) +
                  "; the input is " + shape_str(inputs[k]));
    }
  }
}

std::vector<TangentSeed> seeds_for(Tape& tape, const std::vector<Var>& at, const std::vector<arma::mat>& v) {
  std::vector<TangentSeed> seeds;
  for (std::size_t k = 0; k < at.size(); ++k) {
    if (!v[k].is_empty()) seeds.push_back({at[k], tape.constant(v[k], "tangent seed")});
  }
  return seeds;
}

// Input element j (flattened order) as a seed: a one at that element, on that input alone.
std::vector<TangentSeed> unit_seed(Tape& tape, const std::vector<Var>& at, std::size_t j) {
  for (const Var& x : at) {
    const arma::uword n = x.value().n_elem;
    if (j < n) {
      arma::mat e(arma::size(x.value()), arma::fill::zeros);
      e(j) = 1;
      return {{x, tape.constant(std::move(e), "tangent seed")}};
    }
    j -= n;
  }
  throw Error("unit_seed: element past the inputs' end");
}

void require_scalar(const char* what, Var y) {
  if (y.value().n_elem != 1)
    throw Error(std::string(what) + ": f's output is " + y.shape() + "; a Hessian needs a scalar (1x1) output");
}

std::vector<arma::mat> grads_of(const std::vector<Var>& vars) {
  std::vector<arma::mat> g;
  for (const Var& v : vars) g.push_back(v.grad());
  return g;
}

}  // namespace

std::size_t element_count(const std::vector<arma::mat>& ms) {
  std::size_t n = 0;
  for (const arma::mat& m : ms) n += m.n_elem;
  return n;
}

arma::vec flatten(const std::vector<arma::mat>& ms) {
  arma::vec v(element_count(ms));
  arma::uword at = 0;
  for (const arma::mat& m : ms) {
    if (m.n_elem > 0) v.subvec(at, at + m.n_elem - 1) = arma::vectorise(m);
    at += m.n_elem;
  }
  return v;
}

std::vector<arma::mat> unflatten(const arma::vec& v, const std::vector<arma::mat>& shapes) {
  if (v.n_elem != element_count(shapes))
    throw Error("unflatten: " + std::to_string(v.n_elem) + " values for " + std::to_string(element_count(shapes)) + " elements");
  std::vector<arma::mat> out;
  arma::uword at = 0;
  for (const arma::mat& s : shapes) {
    arma::mat m(arma::size(s));
    for (arma::uword e = 0; e < m.n_elem; ++e) m(e) = v(at + e);
    at += m.n_elem;
    out.push_back(std::move(m));
  }
  return out;
}

JvpResult jvp(const TapeFunction& f, const std::vector<arma::mat>& inputs, const std::vector<arma::mat>& tangents) {
  check_like("jvp", inputs, tangents, true);
  Tape tape;
  NoGrad no_grad(tape);  // forward mode alone saves nothing for backward
  const std::vector<Var> x = leaves_of(tape, inputs);
  const Var y = f(tape, x);
  const Var dy = push_tangents(y, seeds_for(tape, x, tangents));
  return {y.value(), dy.value()};
}

VjpResult vjp(const TapeFunction& f, const std::vector<arma::mat>& inputs, const arma::mat& cotangent) {
  Tape tape;
  const std::vector<Var> x = leaves_of(tape, inputs);
  const Var y = f(tape, x);
  VjpResult r{y.value(), {}};
  if (!tape.node(y.id).requires_grad) {  // f ignores its inputs: J = 0
    for (const arma::mat& in : inputs) r.cotangents.push_back(arma::zeros(arma::size(in)));
    return r;
  }
  tape.backward(y, cotangent);
  r.cotangents = grads_of(x);
  return r;
}

namespace {

Jacobian forward_jacobian(const TapeFunction& f, const std::vector<arma::mat>& inputs) {
  Tape tape;
  NoGrad no_grad(tape);
  const std::vector<Var> x = leaves_of(tape, inputs);
  const Var y = f(tape, x);
  Jacobian J{arma::mat(y.value().n_elem, element_count(inputs)), 0};
  for (std::size_t j = 0; j < J.matrix.n_cols; ++j, ++J.passes) {
    J.matrix.col(j) = arma::vectorise(push_tangents(y, unit_seed(tape, x, j)).value());
  }
  return J;
}

Jacobian reverse_jacobian(const TapeFunction& f, const std::vector<arma::mat>& inputs) {
  Tape tape;
  const std::vector<Var> x = fresh_views(leaves_of(tape, inputs));
  const Var y = f(tape, x);
  Jacobian J{arma::mat(y.value().n_elem, element_count(inputs), arma::fill::zeros), 0};
  if (!tape.node(y.id).requires_grad) return J;  // f ignores its inputs
  for (std::size_t i = 0; i < J.matrix.n_rows; ++i, ++J.passes) {
    arma::mat e(arma::size(y.value()), arma::fill::zeros);
    e(i) = 1;
    tape.backward(y, std::move(e), true);
    J.matrix.row(i) = flatten(grads_of(x)).t();
  }
  return J;
}

}  // namespace

Jacobian jacobian(const TapeFunction& f, const std::vector<arma::mat>& inputs, Mode mode) {
  return mode == Mode::Forward ? forward_jacobian(f, inputs) : reverse_jacobian(f, inputs);
}

std::vector<arma::mat> hvp(const TapeFunction& f, const std::vector<arma::mat>& inputs,
                           const std::vector<arma::mat>& v) {
  check_like("hvp", inputs, v, true);
  Tape tape;
  const std::vector<Var> x = leaves_of(tape, inputs);
  const Var y = f(tape, x);
  require_scalar("hvp", y);
  const Var dy = push_tangents(y, seeds_for(tape, x, v));  // grad f . v, recorded
  if (!tape.node(dy.id).requires_grad) {  // f is affine in x: H = 0
    std::vector<arma::mat> zero;
    for (const arma::mat& in : inputs) zero.push_back(arma::zeros(arma::size(in)));
    return zero;
  }
  tape.backward(dy);
  return grads_of(x);
}

Jacobian hessian(const TapeFunction& f, const std::vector<arma::mat>& inputs) {
  Tape tape;
  const std::vector<Var> x = fresh_views(leaves_of(tape, inputs));
  const Var y = f(tape, x);
  require_scalar("hessian", y);
  const std::size_t n = element_count(inputs);
  Jacobian H{arma::mat(n, n, arma::fill::zeros), 0};
  for (std::size_t j = 0; j < n; ++j, ++H.passes) {
    const Var dy = push_tangents(y, unit_seed(tape, x, j));
    if (!tape.node(dy.id).requires_grad) continue;  // column j of H is zero
    tape.backward(dy, true);
    H.matrix.col(j) = flatten(grads_of(x));
  }
  return H;
}

}  // namespace ag
