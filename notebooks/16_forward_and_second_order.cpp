// %% [markdown]
// # Lesson 16: forward mode and second order on the same tape
//
// Reverse mode (every lesson so far) walks the tape from the output back and
// gives a vector-Jacobian product $J^T u$: one backward per output. Forward mode
// walks it from the inputs on and gives a Jacobian-vector product $J v$: one
// pass per input direction. This project does both on one tape: each op
// declares its JVP rule beside its forward and backward, written with the
// tape's own ops, so the tangents are recorded nodes like any other. Running
// reverse mode over a tangent gives second derivatives, because
// $\nabla_x (\nabla f(x) \cdot v) = H v$ (reverse-over-forward).

// %%
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include "autograd/custom_op.h"
#include "autograd/forward.h"
#include "check/forward_check.h"
#include "check/listing.h"
#include "check/norm_second_order.h"
#include "notebooks/notebook.h"
#include "ops/functional.h"
#include "ops/ops.h"

using namespace ag;

// y = tanh(x W): R^n -> R^m for a 1 x n row x and an n x m matrix W.
TapeFunction layer(const arma::mat& w) {
  return [w](Tape& t, const std::vector<Var>& x) { return tanh(matmul(x[0], t.constant(w, "W"))); };
}

// %% [markdown]
// ## Forward against reverse, on one tape
//
// $f(x) = \sum \tanh(x)^2$ for a 1 x 3 x. One tangent pass along v gives
// $\langle \nabla f, v \rangle$; the tape then holds the primal nodes and, after them, the
// tangent nodes (listed as `tangent:`). Backward from the primal output gives
// grad f; backward from the tangent gives H v.

// %%
NB_CELL {
  Tape tape;
  Var x = tape.leaf(arma::mat{{0.5, -1.0, 2.0}}, "x");
  Var y = sum(square(tanh(x)));
  Var v = tape.constant(arma::mat{{1.0, 0.0, 0.0}}, "v");
  const std::size_t primal = tape.size();
  Var dy = push_tangents(y, {{x, v}});
  std::cout << format_tape(tape);
  std::printf("%zu primal nodes (v included), %zu tangent nodes: a gradient's backward walks the first %zu, "
              "H v's backward all %zu\n", primal, tape.size() - primal, primal, tape.size());
  tape.backward(y, true);
  const arma::mat g = x.grad();
  nb::show("grad f (reverse)", g);
  nb::show("<grad f, v> (forward)", dy.item());
  nb::check_close("forward mode's <grad f, v> equals reverse mode's grad f . v", dy.item(), g(0), 1e-15);
  // x.grad() accumulates; H v is what the second backward adds.
  tape.backward(dy);
  const arma::mat hv = x.grad() - g;
  nb::show("H v (reverse over the tangent)", hv);
  const double t = std::tanh(0.5), exact = 2 * (1 - t * t) * (1 - 3 * t * t);  // d2/dx2 tanh(x)^2
  nb::check_close("H v's first entry is d2/dx2 tanh(x)^2 at 0.5", hv(0), exact, 1e-14);
  nb::check(hv(1) == 0 && hv(2) == 0, "f is a sum over elements, so H is diagonal: H e_1 is zero off its first entry");
}

// %% [markdown]
// ## The cost of a Jacobian each way
//
// For $f: \mathbb{R}^n \to \mathbb{R}^m$ the Jacobian is $m \times n$. Forward mode builds it a column at a
// time (n tangent passes), reverse mode a row at a time (m backward passes).
// `ag::jacobian(f, x, Mode::Forward | Mode::Reverse)` reports the passes it
// took. Below, y = tanh(x W) with m = 16 outputs and n from 2 to 64 inputs;
// the passes are asserted, the times are measured on this run (the fastest
// of 20 calls; they depend on the machine and its load, so they are printed,
// not asserted).

// %%
NB_CELL {
  const arma::uword m = 16;
  std::vector<double> ns, forward_ms, reverse_ms;
  Rng rng(1);
  for (arma::uword n : {2u, 4u, 8u, 12u, 16u, 24u, 32u, 48u, 64u}) {
    const arma::mat w = rng.normal(n, m, 1.0 / std::sqrt(double(n)));
    const arma::mat x = rng.normal(1, n, 1.0);
    // The fastest of 20 calls each way: the least disturbed by other work on the machine.
    Jacobian fwd, rev;
    double best_forward = 1e300, best_reverse = 1e300;
    for (int r = 0; r < 20; ++r) {
      const auto start = std::chrono::steady_clock::now();
      fwd = jacobian(layer(w), {x}, Mode::Forward);
      const auto mid = std::chrono::steady_clock::now();
      rev = jacobian(layer(w), {x}, Mode::Reverse);
      const auto end = std::chrono::steady_clock::now();
      best_forward = std::min(best_forward, std::chrono::duration<double, std::milli>(mid - start).count());
      best_reverse = std::min(best_reverse, std::chrono::duration<double, std::milli>(end - mid).count());
    }
    nb::check(fwd.passes == n && rev.passes == m, "n = " + std::to_string(n) + ": " + std::to_string(fwd.passes) +
                                                      " forward passes, " + std::to_string(rev.passes) + " backward");
    nb::check(arma::abs(fwd.matrix - rev.matrix).max() < 1e-14, "both ways give the same Jacobian to 1e-14");
    ns.push_back(double(n));
    forward_ms.push_back(best_forward);
    reverse_ms.push_back(best_reverse);
    std::cout << "n = " << n << ": forward " << forward_ms.back() << " ms, reverse " << reverse_ms.back() << " ms\n";
  }
  for (std::size_t k = 0; k < ns.size(); ++k) {
    if (forward_ms[k] > reverse_ms[k]) {
      std::cout << "measured on this run: forward mode is first slower at n = " << ns[k] << "; per pass, forward "
                << forward_ms[k] / ns[k] << " ms, reverse " << reverse_ms[k] / double(m) << " ms\n";
      break;
    }
  }
  nb::Plot plot{"jacobian_cost", "Jacobian of tanh(x W), m = 16 outputs: time per Jacobian", "inputs n",
                "ms per Jacobian (fastest of 20)", true, true, {}, {}};
  plot.add("forward mode (n passes)", ns, forward_ms, "linespoints").add("reverse mode (m = 16 passes)", ns, reverse_ms,
                                                                          "linespoints");
  plot.extra = {"set key inside left top", "set arrow from 16, graph 0 to 16, graph 1 nohead dt 2",
                "set label 'n = m' at 17, graph 0.5"};
  nb::draw(plot);
}

// %% [markdown]
// The dashed line is n = m, where the two pass counts are equal. Left of it
// (fewer inputs than outputs) forward mode takes fewer passes; right of it
// reverse mode does. A forward pass records a few nodes per primal node (its
// JVP rule's ops) and a backward pass visits each node once, so the cost of a
// pass differs between the modes by a constant factor and the measured lines
// need not cross exactly at n = m: the times printed above are this run's. A loss (m = 1) is why training uses reverse
// mode.
//
// ## The transpose identity
//
// Forward and reverse mode compute with the same Jacobian, so for any u and v,
// $\langle u, J v \rangle = \langle J^T u, v \rangle$. Both sides come from one pass each, with no finite
// differences, so the check holds to rounding and sees mistakes far below
// what a finite-difference check can resolve. The relative error it reports
// is $|\langle u, J v \rangle - \langle J^T u, v \rangle| / (|u| \, |J v| + |J^T u| \, |v|)$ (check/forward_check.cpp):
// the denominator is about twice the size of either side, or more when u and
// J v are not aligned, so a JVP wrong by 1e-9 relative shows as a smaller
// number, about 1e-10 here, still far above rounding (1e-16).

// %%
NB_CELL {
  Rng rng(2);
  const arma::mat w = rng.normal(5, 3, 0.5), x = rng.normal(1, 5, 1.0);
  const TransposeReport r = transpose_identity(layer(w), {x}, 3);
  nb::show("<u, J v>  (forward)", r.forward, 17);
  nb::show("<J^T u, v> (reverse)", r.reverse, 17);
  nb::show("relative error", r.rel_error, 3);
  nb::check(r.rel_error <= 1e-15, "the two sides agree to 1e-15 relative");
  // A JVP 1e-9 relative too large: a custom op with a planted mistake.
  static const Function planted{"planted_tanh", [](const Inputs& in) { return arma::mat(arma::tanh(in[0])); },
                                [](const Inputs&, const arma::mat& y, const arma::mat& dy) {
                                  return Grads{arma::mat(dy % (1 - y % y))};
                                },
                                [](const JvpArgs& a) { return (1 + 1e-9) * (a.dx[0] * (1.0 - square(a.y))); }};
  const TapeFunction wrong = [&](Tape& t, const std::vector<Var>& in) {
    return apply(planted, {matmul(in[0], t.constant(w))});
  };
  const TransposeReport bad = transpose_identity(wrong, {x}, 3);
  nb::show("relative error with the planted 1e-9 mistake", bad.rel_error, 3);
  nb::check(!bad.passed && bad.rel_error > 1e-11, "the planted mistake is caught (tolerance 1e-12)");
  GradcheckOptions options;
  const DirectionalReport fd = jvp_against_fd(wrong, {x}, options);
  nb::check(fd.passed, "the same mistake passes the JVP check against finite differences");
}

// %% [markdown]
// ## Newton's method with Hessian-vector products
//
// Newton's step solves H d = -g. Conjugate gradient solves it using only
// products H p, never H itself: one tangent pass and one backward each.
// The problem: L2-regularised logistic regression on 40 points in 6
// dimensions (convex, so H is positive definite), against gradient descent
// with a step of 1 / (largest eigenvalue of H at the start).

// %%
struct Logistic {
  arma::mat a;  // 40 x 6 features
  arma::mat y;  // 40 x 1 labels in {0, 1}
  Var loss(Tape& t, Var w) const {  // mean log(1 + exp(z)) - y z, plus 0.05 |w|^2
    Var z = matmul(t.constant(a), w);
    Var softplus = log(exp(z) + 1.0);
    return mean(softplus - z * t.constant(y)) + 0.05 * sum(square(w));
  }
  TapeFunction f() const {
    return [this](Tape& t, const std::vector<Var>& w) { return loss(t, w[0]); };
  }
};

arma::mat cg_solve(const Logistic& p, const arma::mat& w, const arma::mat& g, int iterations) {
  arma::mat d(arma::size(g), arma::fill::zeros), r = -g, q = r;
  for (int k = 0; k < iterations && arma::norm(r) > 1e-14; ++k) {
    const arma::mat hq = hvp(p.f(), {w}, {q})[0];
    const double alpha = arma::accu(r % r) / arma::accu(q % hq);
    d += alpha * q;
    const arma::mat r_next = r - alpha * hq;
    q = r_next + (arma::accu(r_next % r_next) / arma::accu(r % r)) * q;
    r = r_next;
  }
  return d;
}

NB_CELL {
  Rng rng(4);
  Logistic p{rng.normal(40, 6, 1.0), arma::mat(40, 1)};
  const arma::mat truth = rng.normal(6, 1, 1.0);
  for (arma::uword i = 0; i < 40; ++i) p.y(i) = arma::as_scalar(p.a.row(i) * truth) + rng.normal() > 0 ? 1 : 0;
  const arma::mat w0(6, 1, arma::fill::zeros);
  const double lmax = arma::eig_sym(hessian(p.f(), {w0}).matrix).max();
  arma::mat wn = w0, wg = w0;
  std::vector<double> steps, newton_norm, gd_norm;
  for (int k = 0; k <= 8; ++k) {
    const arma::mat gn = vjp(p.f(), {wn}, arma::ones(1, 1)).cotangents[0];
    const arma::mat gg = vjp(p.f(), {wg}, arma::ones(1, 1)).cotangents[0];
    steps.push_back(k);
    newton_norm.push_back(std::max(arma::norm(gn), 1e-17));
    gd_norm.push_back(arma::norm(gg));
    std::cout << "step " << k << ": |grad| Newton-CG " << newton_norm.back() << ", gradient descent " << gd_norm.back()
              << "\n";
    wn += cg_solve(p, wn, gn, 6);
    wg -= (1.0 / lmax) * gg;
  }
  nb::check(newton_norm.back() < 1e-12, "Newton-CG (6 HVPs a step) reaches |grad| < 1e-12 in 8 steps");
  nb::check(gd_norm.back() > 1e3 * newton_norm[4], "gradient descent after 8 steps is short of Newton after 4");
  nb::Plot plot{"newton_vs_gd", "Logistic regression, 6 weights: gradient norm per step", "step", "|grad L|",
                false, true, {}, {"set key inside bottom left"}};
  plot.add("Newton-CG (Hessian-vector products)", steps, newton_norm, "linespoints")
      .add("gradient descent, step 1 / largest eigenvalue of H", steps, gd_norm, "linespoints");
  nb::draw(plot);
}

// %% [markdown]
// Newton's convergence is quadratic near the minimum (the gradient norm's
// exponent roughly doubles each step until rounding); gradient descent's is
// linear, at a rate set by the condition number of H.
//
// ## LayerNorm's Hessian
//
// Take one row x of D = 5 values and L(x) = <dy, LayerNorm(x)> (gamma = 1,
// beta = 0). LayerNorm does not change when the same c is added to every x_j,
// so neither does L: the gradient is orthogonal to the all-ones vector 1 at
// every x, and differentiating that once more gives H 1 = 0. The Hessian is
// symmetric, and the fused node's handwritten JVP must give the same H as
// the composed primitives.

// %%
NB_CELL {
  Rng rng(5);
  const arma::mat x = rng.normal(1, 5, 1.0), dy = rng.uniform(1, 5, -1, 1);
  auto loss = [&](bool fused) -> TapeFunction {
    return [&, fused](Tape& t, const std::vector<Var>& in) {
      Var g = t.constant(arma::ones(1, 5)), b = t.constant(arma::zeros(1, 5));
      Var y = fused ? layernorm_fused(in[0], g, b, 1e-5) : layernorm_composed(in[0], g, b, 1e-5);
      return sum(y * t.constant(dy));
    };
  };
  const arma::mat hc = hessian(loss(false), {x}).matrix, hf = hessian(loss(true), {x}).matrix;
  nb::show("H (composed)", hc);
  const double scale = arma::abs(hc).max();
  nb::check(arma::abs(hc - hc.t()).max() <= 1e-13 * scale, "H is symmetric to 1e-13 relative");
  nb::check(arma::abs(hc * arma::ones(5, 1)).max() <= 1e-13 * scale, "H 1 = 0: the shift direction has zero curvature");
  nb::check(arma::abs(hc - hf).max() <= 1e-13 * scale, "the fused node's Hessian equals the composed one's to 1e-13");
  const arma::vec eig = arma::eig_sym(hc);
  nb::show("eigenvalues of H", eig.t());
  nb::check(arma::abs(eig).min() <= 1e-13 * scale, "one eigenvalue is zero (to 1e-13 relative): the shift direction");
  nb::check(eig.min() < -1e-3 * scale && eig.max() > 1e-3 * scale, "H is indefinite: L is a saddle in x, not a bowl");
  nb::heatmap("layernorm_hessian", "Hessian of <dy, LayerNorm(x)> in x (D = 5)", hc, "x_j", "x_i");
}

// %% [markdown]
// The zero eigenvalue is the shift direction. The HVP of the fused
// and composed LayerNorm agree on every input the tests draw
// (`tests/test_forward_modules.cpp`), and `autograd layernorm --order 2`
// shows it on your own input.
//
// ## What to remember
//
// - Forward mode: J v, one pass per input direction; reverse mode: J^T u,
//   one pass per output. A Jacobian costs n passes forward, m in reverse.
// - On this tape, tangents are ordinary nodes, so reverse mode over a tangent
//   gives H v: one primal forward, one tangent pass (a few nodes per primal
//   node: the first cell prints the counts) and one backward over both, a
//   small multiple of a gradient's cost, where the whole Hessian would take n
//   of them.
// - $\langle u, J v \rangle = \langle J^T u, v \rangle$ checks forward against reverse to rounding, no
//   finite differences.
// - Newton-CG needs only HVPs, never H.

// %% [markdown]
// ## Exercises
//
// 1. (medium) For y = tanh(x W) with n = 64 inputs, how many outputs m make both
//    modes take the same number of passes? Measure both times there with the
//    cell above and explain any gap.
// 2. (easy) The Hessian of a sum of per-element functions (the first cell's f) is
//    diagonal. How many HVPs give all of its diagonal? How many does
//    `ag::hessian` use?
// 3. (medium) Plant an error in a VJP instead of the JVP (scale the backward by
//    1 + 1e-9). Does the transpose identity catch it? Does gradcheck?
// 4. (hard) Why is LayerNorm's H x close to -grad L, and when is it exact? (Hint:
//    LayerNorm(a x) for a > 0, with eps = 0.)
