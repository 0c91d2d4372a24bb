#include "check/forward_check.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <sstream>

#include "autograd/rng.h"
#include "check/node_check.h"
#include "ops/functional.h"
#include "ops/ops.h"

namespace ag {

namespace {

std::vector<arma::mat> random_like(const std::vector<arma::mat>& shapes, Rng& rng) {
  std::vector<arma::mat> v;
  for (const arma::mat& s : shapes) v.push_back(rng.uniform(s.n_rows, s.n_cols, -1.0, 1.0));
  return v;
}

arma::mat output_of(const TapeFunction& f, const std::vector<arma::mat>& inputs) {
  Tape tape;
  NoGrad no_grad(tape);
  std::vector<Var> x;
  for (const arma::mat& m : inputs) x.push_back(tape.constant(m));
  return f(tape, x).value();
}

DirectionalReport compare(arma::mat analytic, arma::mat numeric, const GradcheckOptions& options) {
  DirectionalReport r{std::move(analytic), std::move(numeric), 0, 0, true};
  for (arma::uword e = 0; e < r.analytic.n_elem; ++e) {
    const double a = r.analytic(e), n = r.numeric(e);
    const double err = std::abs(a - n), scale = std::max(std::abs(a), std::abs(n));
    r.max_abs_error = std::max(r.max_abs_error, err);
    r.max_rel_error = std::max(r.max_rel_error, scale > 0 ? err / scale : 0.0);
    if (!within_tolerance(a, n, options.atol, options.rtol)) r.passed = false;
  }
  return r;
}

}  // namespace

TapeFunction scalarised(const TapeFunction& f, const std::vector<arma::mat>& inputs, std::uint64_t seed) {
  const arma::mat y = output_of(f, inputs);
  Rng rng(derive_seed(seed, 7));
  const arma::mat w = rng.uniform(y.n_rows, y.n_cols, -1.0, 1.0);
  return [f, w](Tape& tape, const std::vector<Var>& x) { return sum(mul(f(tape, x), tape.constant(w, "w"))); };
}

namespace {

// Sum over the primal nodes k up to y of <|g_k|, |t_k|>: each node's tangent
// t_k against its adjoint g_k (the gradient of <u, y> at k), read after the
// backward from y. Rounding at node k moves t_k by a few ulps of |t_k|, and so
// <u, J v> by about <|g_k|, ulp(t_k)>; the reverse pass is the same sum read
// the other way.
double primal_scale(Tape& tape, Var y, const std::vector<Var>& tangents) {
  double scale = 0;
  for (std::size_t k = 0; k <= y.id; ++k) {
    const arma::mat& t = tangents[k].value();
    if (t.n_elem == 0 || !tape.node(k).requires_grad) continue;
    scale += arma::accu(arma::abs(tape.grad(tape.var(k))) % arma::abs(t));
  }
  return scale;
}

// The reverse pass's own terms: what each node's backward sends into each
// input slot, before the slots' shares are added into the input's gradient
// (replayed alone, check/node_check.h), against that input's tangent. div(a, a)
// sends u / a and -u a / a^2 into a's gradient, which cancel up to rounding;
// when the tangents past it are exactly zero, no pairing above sees the terms
// that rounding is relative to. A node whose backward cannot be replayed alone
// adds nothing (the scale is then only smaller, never a false pass).
double contribution_scale(Tape& tape, Var y, const std::vector<Var>& tangents) {
  double scale = 0;
  for (std::size_t k = 0; k <= y.id; ++k) {
    const Node& n = tape.node(k);
    if (!n.backward || n.is_param) continue;
    const arma::mat& g = tape.grad(tape.var(k));
    if (!arma::any(arma::vectorise(g))) continue;  // no gradient reached it: it sent nothing
    Inputs values;
    for (std::size_t in : n.inputs) values.push_back(tape.value(in));
    try {
      const Grads c = node_backward_alone(n, values, g);
      for (std::size_t s = 0; s < c.size(); ++s) {
        const arma::mat& t = tangents[n.inputs[s]].value();
        if (arma::size(c[s]) == arma::size(t)) scale += arma::accu(arma::abs(c[s]) % arma::abs(t));
      }
    } catch (const Error&) {
    }
  }
  return scale;
}

// The same inside the JVP rules: every node the tangent pass recorded against
// its adjoint in <u, J v>, from a backward over the tangent graph. An op's rule
// can cancel within itself (softmax: dx - sum(y dx) where y is nearly one-hot,
// so J nearly vanishes) and no primal node shows those terms; its backward
// computes the transposed products, of the same size. Anomaly mode is off for
// this pass: what reaches the primal nodes here is second order, never read.
double tangent_scale(Tape& tape, Var y, Var jv, const arma::mat& u) {
  if (jv.id <= y.id || !tape.node(jv.id).requires_grad) return 0;  // no tangent node: nothing moved
  const bool anomaly = tape.anomaly_mode();
  tape.set_anomaly_mode(false);
  tape.backward(jv, u, true);
  tape.set_anomaly_mode(anomaly);
  double scale = 0;
  for (std::size_t m = y.id + 1; m <= jv.id; ++m) {
    if (tape.node(m).requires_grad) scale += arma::accu(arma::abs(tape.grad(tape.var(m))) % arma::abs(tape.value(m)));
  }
  return scale;
}

// f recorded on `tape` from leaves holding the inputs, refused unless its output is of that tape.
Var record_f(const TapeFunction& f, Tape& tape, const std::vector<arma::mat>& inputs, std::vector<Var>& x) {
  for (std::size_t k = 0; k < inputs.size(); ++k) x.push_back(tape.leaf(inputs[k], "input " + std::to_string(k)));
  const Var y = f(tape, x);
  if (y.tape != &tape) throw Error("transpose_identity: f returned a Var that was not recorded on the tape it was given");
  tape.check(y, "transpose_identity");
  return y;
}

}  // namespace

// Both passes on one recording of f, the tangents recorded with grad enabled
// and seeded by leaves, so that every value of either pass can be paired with
// its adjoint: the scale is the size of the terms before they cancel, at every
// node (forward_check.h). Never below |u| |J v| + |J^T u| |v|, the ends alone.
TransposeReport transpose_identity(const TapeFunction& f, const std::vector<arma::mat>& inputs,
                                   std::uint64_t seed, double tolerance) {
  Rng rng(seed);
  const std::vector<arma::mat> v = random_like(inputs, rng);
  Tape tape;
  std::vector<Var> x;
  const Var y = record_f(f, tape, inputs, x);
  const arma::mat u = rng.uniform(y.value().n_rows, y.value().n_cols, -1.0, 1.0);
  std::vector<TangentSeed> seeds = no_grad_seeds(tape, y);
  for (std::size_t k = 0; k < x.size(); ++k) seeds.push_back({x[k], tape.leaf(v[k], "tangent seed")});
  std::vector<Var> nodes;
  for (std::size_t k = 0; k <= y.id; ++k) nodes.push_back(tape.var(k));
  const std::vector<Var> tangents = push_tangents(nodes, seeds);
  TransposeReport r;
  r.forward = arma::accu(u % tangents.back().value());
  if (tape.node(y.id).requires_grad) {
    tape.backward(y, u, true);
    std::vector<arma::mat> jtu;
    for (const Var& xk : x) jtu.push_back(xk.grad());
    const arma::vec jtu_flat = flatten(jtu), v_flat = flatten(v);
    r.reverse = arma::dot(jtu_flat, v_flat);
    const double ends = arma::norm(arma::vectorise(u)) * arma::norm(arma::vectorise(tangents.back().value())) +
                        arma::norm(jtu_flat) * arma::norm(v_flat);
    const double inside = primal_scale(tape, y, tangents) + contribution_scale(tape, y, tangents) +
                          tangent_scale(tape, y, tangents.back(), u);
    r.scale = std::max(ends, inside);
  }
  const double err = std::abs(r.forward - r.reverse);
  r.rel_error = r.scale > 0 ? err / r.scale : (err == 0 ? 0.0 : arma::datum::inf);
  r.passed = r.rel_error <= tolerance;  // NaN fails
  return r;
}

DirectionalReport jvp_against_fd(const TapeFunction& f, const std::vector<arma::mat>& inputs,
                                 const GradcheckOptions& options) {
  Rng rng(derive_seed(options.seed, 1));
  const std::vector<arma::mat> v = random_like(inputs, rng);
  const arma::mat analytic = jvp(f, inputs, v).tangent;
  const MatrixFunction output = [&](const std::vector<arma::mat>& x) { return output_of(f, x); };
  return compare(analytic, directional_difference(output, inputs, v, options.eps), options);
}

DirectionalReport hvp_against_fd(const TapeFunction& f, const std::vector<arma::mat>& inputs,
                                 const GradcheckOptions& options) {
  const TapeFunction g = scalarised(f, inputs, options.seed);
  Rng rng(derive_seed(options.seed, 2));
  const std::vector<arma::mat> v = random_like(inputs, rng);
  const arma::vec analytic = flatten(hvp(g, inputs, v));
  const arma::mat one(1, 1, arma::fill::ones);
  const MatrixFunction gradient = [&](const std::vector<arma::mat>& x) {
    return arma::mat(flatten(vjp(g, x, one).cotangents));
  };
  return compare(analytic, directional_difference(gradient, inputs, v, options.eps), options);
}

SymmetryReport hessian_symmetry(const TapeFunction& f, const std::vector<arma::mat>& inputs,
                                const GradcheckOptions& options, double tolerance) {
  const arma::mat H = hessian(scalarised(f, inputs, options.seed), inputs).matrix;
  SymmetryReport r;
  r.max_asymmetry = H.is_empty() ? 0.0 : arma::abs(H - H.t()).max();
  r.max_abs = H.is_empty() ? 0.0 : arma::abs(H).max();
  r.passed = r.max_asymmetry <= tolerance * std::max(r.max_abs, 1.0);
  return r;
}

ForwardCheck check_forward(const TapeFunction& f, const std::vector<arma::mat>& inputs, int order,
                           const GradcheckOptions& options) {
  ForwardCheck c;
  c.transpose = transpose_identity(f, inputs, derive_seed(options.seed, 3));
  c.jvp = jvp_against_fd(f, inputs, options);
  c.passed = c.transpose.passed && c.jvp.passed;
  if (order >= 2) {
    c.hvp = hvp_against_fd(f, inputs, options);
    c.symmetry = hessian_symmetry(f, inputs, options);
    c.passed = c.passed && c.hvp.passed && c.symmetry.passed;
  }
  return c;
}

std::string ForwardCheck::summary() const {
  std::ostringstream os;
  os << "transpose identity: <u, J v> " << transpose.forward << " vs <J^T u, v> " << transpose.reverse
     << ", rel error " << transpose.rel_error << (transpose.passed ? ": PASS\n" : ": FAIL\n");
  os << "JVP against FD: max abs error " << jvp.max_abs_error << ", max rel error " << jvp.max_rel_error
     << (jvp.passed ? ": PASS\n" : ": FAIL\n");
  if (!hvp.analytic.is_empty() || !hvp.numeric.is_empty()) {
    os << "HVP against FD of the gradient: max abs error " << hvp.max_abs_error << ", max rel error "
       << hvp.max_rel_error << (hvp.passed ? ": PASS\n" : ": FAIL\n");
    os << "Hessian symmetry: max |H - H^T| " << symmetry.max_asymmetry << " (max |H| " << symmetry.max_abs << ")"
       << (symmetry.passed ? ": PASS\n" : ": FAIL\n");
  }
  return os.str();
}

}  // namespace ag
