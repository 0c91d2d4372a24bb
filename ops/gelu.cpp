#include "ops/gelu.h"

#include <cmath>

#include "ops/elementwise.h"

namespace ag {

namespace {
constexpr double kCubic = 0.044715;
const double kScale = std::sqrt(2.0 / M_PI);  // sqrt(2/pi)
}  // namespace

// ---- composed: the tape derives the backward ----------------------------------

// Composed: no node carries its name; forward mode runs through its ops' rules.
const OpDef& gelu_def() {
  static const OpDef def = composed_op("gelu", 1, "y = 0.5 a (1 + tanh(sqrt(2/pi) (a + 0.044715 a^3)))",
                                       "derived by the tape from pow_scalar, mul_scalar, add, tanh, add_scalar, mul");
  return def;
}
Var gelu(Var x) {
  Var inner = kScale * (x + kCubic * pow_scalar(x, 3.0));
  // One statement each: the operands of a * b run in an order each compiler picks
  // (GCC's: b first), and the tape's node order must not depend on it.
  const Var gate = 1.0 + tanh(inner);
  const Var half_x = 0.5 * x;
  return half_x * gate;
}

// ---- fused: one node, handwritten backward ----------------------------------

namespace {
// 0.5 (1 + tanh(u)) = 1 / (1 + exp(-2u)), u = sqrt(2/pi) (x + 0.044715 x^3): the
// GELU's gate as a logistic sigmoid of 2u, one exp where tanh costs an expm1
// and more (2.6x the time in glibc). Below x ~ -21 exp(-2u) is inf and the
// gate exactly 0: no NaN.
double exp_minus_2u(double x) { return std::exp(-2.0 * kScale * (x + kCubic * x * x * x)); }
}  // namespace

// The tangent is the backward's slope times da, term by term, written with ag
// ops in the tanh form (so it is differentiable in turn).
namespace {
Var gelu_tangent(const JvpArgs& j) {
  const Var a = j.x[0];
  const Var t = tanh(kScale * (a + kCubic * pow_scalar(a, 3.0)));
  const Var du = kScale * (1.0 + (3.0 * kCubic) * square(a));  // du/da
  const Var slope = 0.5 * (1.0 + t)                             // term 1: through the factor a
                    + 0.5 * a * (1.0 - square(t)) * du;         // term 2: through tanh(u)
  return slope * j.dx[0];
}
}  // namespace

const OpDef& gelu_fused_def() {
  static const OpDef def{"gelu_fused", 1, "y = 0.5 a (1 + t), t = tanh(sqrt(2/pi) (a + 0.044715 a^3)) (one node)",
                         "da = dy (0.5 (1 + t) + 0.5 a (1 - t^2) sqrt(2/pi) (1 + 3 * 0.044715 a^2)), saving only a",
                         "dy = (0.5 (1 + t) + 0.5 a (1 - t^2) sqrt(2/pi) (1 + 3 * 0.044715 a^2)) da", gelu_tangent};
  return def;
}

// y = x s, s = 1 / (1 + exp(-2u)) = 0.5 (1 + tanh u); saves x only.
Var gelu_fused(Var x) {
  const OpDef& def = gelu_fused_def();
  Tape& t = tape_of(def.name, x);
  arma::mat y(arma::size(x.value()));
  const double* xs = x.value().memptr();
  double* ys = y.memptr();
  for (arma::uword k = 0; k < y.n_elem; ++k) ys[k] = xs[k] / (1.0 + exp_minus_2u(xs[k]));
  return t.record(
      def, {x}, std::move(y),
      [](Tape& t, const Node& n) {
        if (!t.node(n.inputs[0]).requires_grad) return;
        const arma::mat& x = t.value(n.inputs[0]);
        arma::mat dx(arma::size(x));
        const double* xs = x.memptr();
        const double* dout = n.grad.memptr();
        double* dxs = dx.memptr();
        for (arma::uword k = 0; k < dx.n_elem; ++k) {
          const double v = xs[k];
          const double e = exp_minus_2u(v);                           // recomputed, not saved
          const double s = 1.0 / (1.0 + e);                           // the gate, 0.5 (1 + tanh u)
          const double slope = std::isinf(e) ? 0.0 : e * s * s;       // s (1 - s) = (1 - tanh^2 u) / 4, without rounding 1 - s
          const double du = kScale * (1.0 + 3.0 * kCubic * v * v);    // du/dx
          double dval = s;                                            // term 1: through the factor x
          dval += 2.0 * v * slope * du;                               // term 2: through tanh(u), 0.5 x (1 - tanh^2 u) du
          dxs[k] = dout[k] * dval;
        }
        t.accumulate(n.inputs[0], std::move(dx));  // moved: no copy
      },
      Saved{{x}});
}

}  // namespace ag
