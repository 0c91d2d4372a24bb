#include "ops/functional.h"

#include <algorithm>
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

// f(tape, x), refused by name unless its output is a live Var of `tape`: a Var
// of another tape would be read, and differentiated, as if it were this one's.
Var run_f(const char* what, const TapeFunction& f, Tape& tape, const std::vector<Var>& x) {
  const Var y = f(tape, x);
  if (y.tape != &tape) {
    throw Error(std::string(what) + ": f returned a Var that was not recorded on the tape it was given (" +
                (y.tape == nullptr ? "an empty Var" : "a Var of another tape") +
                "); f must record its output on the tape passed to it");
  }
  tape.check(y, what);
  return y;
}

// The caller's tangents, plus the zero seeds that hold what f recorded under NoGrad fixed.
std::vector<TangentSeed> seeds_for(Tape& tape, const std::vector<Var>& at, const std::vector<arma::mat>& v,
                                   std::vector<TangentSeed> fixed) {
  for (std::size_t k = 0; k < at.size(); ++k) {
    if (!v[k].is_empty()) fixed.push_back({at[k], tape.constant(v[k], "tangent seed")});
  }
  return fixed;
}

// Input element j (flattened order) as a seed: a one at that element, on that input alone.
std::vector<TangentSeed> unit_seed(Tape& tape, const std::vector<Var>& at, std::size_t j,
                                   std::vector<TangentSeed> fixed) {
  for (const Var& x : at) {
    const arma::uword n = x.value().n_elem;
    if (j < n) {
      arma::mat e(arma::size(x.value()), arma::fill::zeros);
      e(j) = 1;
      fixed.push_back({x, tape.constant(std::move(e), "tangent seed")});
      return fixed;
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

std::vector<TangentSeed> no_grad_seeds(Tape& tape, Var output) {
  tape.check(output, "no_grad_seeds");
  std::vector<TangentSeed> seeds;
  for (std::size_t id = 0; id <= output.id; ++id) {
    const Node& n = tape.node(id);
    if (n.requires_grad) continue;
    const bool moving = std::any_of(n.inputs.begin(), n.inputs.end(),
                                    [&](std::size_t in) { return tape.node(in).requires_grad; });
    if (moving) seeds.push_back({tape.var(id), tape.constant(arma::zeros(arma::size(n.value)), "no_grad: held fixed")});
  }
  return seeds;
}

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
  Tape tape;  // f records with grad enabled, so that what it records under NoGrad shows (no_grad_seeds)
  const std::vector<Var> x = leaves_of(tape, inputs);
  const Var y = run_f("jvp", f, tape, x);
  const std::vector<TangentSeed> seeds = seeds_for(tape, x, tangents, no_grad_seeds(tape, y));
  NoGrad no_grad(tape);  // the tangents are constants: nothing saved for backward
  const Var dy = push_tangents(y, seeds);
  return {y.value(), dy.value()};
}

VjpResult vjp(const TapeFunction& f, const std::vector<arma::mat>& inputs, const arma::mat& cotangent) {
  Tape tape;
  const std::vector<Var> x = leaves_of(tape, inputs);
  const Var y = run_f("vjp", f, tape, x);
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

// Each column is one tangent pass on top of f's one recording; the pass's
// nodes are given back (rewind) once its column is read.
Jacobian forward_jacobian(const TapeFunction& f, const std::vector<arma::mat>& inputs) {
  Tape tape;
  const std::vector<Var> x = leaves_of(tape, inputs);
  const Var y = run_f("jacobian", f, tape, x);
  Jacobian J{arma::mat(y.value().n_elem, element_count(inputs), arma::fill::zeros), 0};
  if (J.matrix.n_elem == 0) return J;  // no input element, or an empty output: nothing to push
  const std::vector<TangentSeed> fixed = no_grad_seeds(tape, y);
  NoGrad no_grad(tape);
  const std::size_t mark = tape.mark();
  for (std::size_t j = 0; j < J.matrix.n_cols; ++j, ++J.passes) {
    J.matrix.col(j) = arma::vectorise(push_tangents(y, unit_seed(tape, x, j, fixed)).value());
    tape.rewind(mark);
  }
  return J;
}

Jacobian reverse_jacobian(const TapeFunction& f, const std::vector<arma::mat>& inputs) {
  Tape tape;
  const std::vector<Var> x = fresh_views(leaves_of(tape, inputs));
  const Var y = run_f("jacobian", f, tape, x);
  Jacobian J{arma::mat(y.value().n_elem, element_count(inputs), arma::fill::zeros), 0};
  if (J.matrix.n_elem == 0) return J;                 // no input element, or an empty output
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
  const Var y = run_f("hvp", f, tape, x);
  require_scalar("hvp", y);
  const Var dy = push_tangents(y, seeds_for(tape, x, v, no_grad_seeds(tape, y)));  // grad f . v, recorded
  if (!tape.node(dy.id).requires_grad) {  // f is affine in x: H = 0
    std::vector<arma::mat> zero;
    for (const arma::mat& in : inputs) zero.push_back(arma::zeros(arma::size(in)));
    return zero;
  }
  tape.backward(dy);
  return grads_of(x);
}

// One HVP per column on top of f's one recording. Each pass's tangent nodes are
// given back (rewind) before the next: the tape holds f plus one pass, not n.
Jacobian hessian(const TapeFunction& f, const std::vector<arma::mat>& inputs) {
  Tape tape;
  const std::vector<Var> x = fresh_views(leaves_of(tape, inputs));
  const Var y = run_f("hessian", f, tape, x);
  require_scalar("hessian", y);
  const std::size_t n = element_count(inputs);
  Jacobian H{arma::mat(n, n, arma::fill::zeros), 0};
  const std::vector<TangentSeed> fixed = no_grad_seeds(tape, y);
  const std::size_t mark = tape.mark();
  for (std::size_t j = 0; j < n; ++j, ++H.passes) {
    const Var dy = push_tangents(y, unit_seed(tape, x, j, fixed));
    if (tape.node(dy.id).requires_grad) {  // else column j of H is zero
      tape.backward(dy, true);
      H.matrix.col(j) = flatten(grads_of(x));
    }
    tape.rewind(mark);
  }
  return H;
}

}  // namespace ag
