#include "check/forward_check.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <sstream>

#include "autograd/rng.h"
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

std::vector<arma::mat> moved(std::vector<arma::mat> x, const std::vector<arma::mat>& v, double step) {
  for (std::size_t k = 0; k < x.size(); ++k) x[k] += step * v[k];
  return x;
}

DirectionalReport compare(arma::mat analytic, arma::mat numeric, const GradcheckOptions& options) {
  DirectionalReport r{std::move(analytic), std::move(numeric), 0, 0, true};
  for (arma::uword e = 0; e < r.analytic.n_elem; ++e) {
    const double a = r.analytic(e), n = r.numeric(e);
    const double err = std::abs(a - n), scale = std::max(std::abs(a), std::abs(n));
    r.max_abs_error = std::max(r.max_abs_error, err);
    r.max_rel_error = std::max(r.max_rel_error, scale > 0 ? err / scale : 0.0);
    if (!(err <= options.atol + options.rtol * std::abs(n))) r.passed = false;  // NaN fails
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

// Sum over the nodes k up to y of <|g_k|, |t_k|>: each node's tangent t_k times
// its adjoint g_k (the gradient of <u, y> at k). Rounding at node k perturbs
// t_k by a few ulps of |t_k| and so <u, J v> by about <|g_k|, ulp(t_k)>; the
// reverse pass is the same sum read the other way. This is the size of the
// terms before they cancel, at every node, where |u| |J v| + |J^T u| |v| sees
// only the ends: a J that nearly vanishes (tanh x - (1 - 1e-12) tanh x) has
// tiny ends but ordinary rounding inside.
double uncancelled_scale(Tape& tape, Var y, const std::vector<Var>& tangents) {
  double scale = 0;
  for (std::size_t k = 0; k <= y.id; ++k) {
    const arma::mat& t = tangents[k].value();
    if (t.n_elem == 0 || !tape.node(k).requires_grad) continue;
    scale += arma::accu(arma::abs(tape.grad(tape.var(k))) % arma::abs(t));
  }
  return scale;
}

}  // namespace

// Both passes on one recording of f, so that every node's tangent and adjoint
// can be paired (uncancelled_scale).
TransposeReport transpose_identity(const TapeFunction& f, const std::vector<arma::mat>& inputs,
                                   std::uint64_t seed, double tolerance) {
  Rng rng(seed);
  const std::vector<arma::mat> v = random_like(inputs, rng);
  Tape tape;
  std::vector<Var> x;
  for (std::size_t k = 0; k < inputs.size(); ++k) x.push_back(tape.leaf(inputs[k], "input " + std::to_string(k)));
  const Var y = f(tape, x);
  if (y.tape != &tape) throw Error("transpose_identity: f returned a Var that was not recorded on the tape it was given");
  const arma::mat u = rng.uniform(y.value().n_rows, y.value().n_cols, -1.0, 1.0);
  std::vector<TangentSeed> seeds = no_grad_seeds(tape, y);
  for (std::size_t k = 0; k < x.size(); ++k) seeds.push_back({x[k], tape.constant(v[k], "tangent seed")});
  std::vector<Var> nodes;
  for (std::size_t k = 0; k <= y.id; ++k) nodes.push_back(tape.var(k));
  std::vector<Var> tangents;
  {
    NoGrad no_grad(tape);  // the tangents are constants here: only their values are paired
    tangents = push_tangents(nodes, seeds);
  }
  TransposeReport r;
  r.forward = arma::accu(u % tangents.back().value());
  if (tape.node(y.id).requires_grad) {
    tape.backward(y, u, true);
    std::vector<arma::mat> jtu;
    for (const Var& xk : x) jtu.push_back(xk.grad());
    const arma::vec jtu_flat = flatten(jtu), v_flat = flatten(v);
    r.reverse = arma::dot(jtu_flat, v_flat);
    // Never smaller than the ends alone, |u| |J v| + |J^T u| |v| (the scale before).
    const double ends = arma::norm(arma::vectorise(u)) * arma::norm(arma::vectorise(tangents.back().value())) +
                        arma::norm(jtu_flat) * arma::norm(v_flat);
    r.scale = std::max(ends, uncancelled_scale(tape, y, tangents));
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
  const arma::mat numeric =
      (output_of(f, moved(inputs, v, options.eps)) - output_of(f, moved(inputs, v, -options.eps))) / (2 * options.eps);
  return compare(analytic, numeric, options);
}

DirectionalReport hvp_against_fd(const TapeFunction& f, const std::vector<arma::mat>& inputs,
                                 const GradcheckOptions& options) {
  const TapeFunction g = scalarised(f, inputs, options.seed);
  Rng rng(derive_seed(options.seed, 2));
  const std::vector<arma::mat> v = random_like(inputs, rng);
  const arma::vec analytic = flatten(hvp(g, inputs, v));
  const arma::mat one(1, 1, arma::fill::ones);
  const arma::vec plus = flatten(vjp(g, moved(inputs, v, options.eps), one).cotangents);
  const arma::vec minus = flatten(vjp(g, moved(inputs, v, -options.eps), one).cotangents);
  return compare(analytic, (plus - minus) / (2 * options.eps), options);
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
