#include "ops/elementwise.h"

#include <cmath>
#include <functional>

#include "ops/broadcast.h"

namespace ag {

namespace {
std::size_t in0(const Node& n) { return n.inputs[0]; }
std::size_t in1(const Node& n) { return n.inputs[1]; }
using J = const JvpArgs&;  // what a forward-mode rule reads

// a^p elementwise. The small whole powers are products, as in PyTorch's
// pow_tensor_scalar_optimized_kernel: a^2 = a*a is rounded once, like libm's
// pow (within 0.52 ulp, so the two agree but for rare ties); a^3 = a*a*a is
// rounded twice, within about 1.5 ulp of the exact cube. glibc's pow costs
// about 14 ns an element here, a product under 1 ns, and the composed GELU
// takes a cube forward and a square backward on every element of the FFN.
arma::mat power(const arma::mat& a, double p) {
  if (p == 1.0) return a;
  if (p == 2.0) return arma::square(a);
  if (p == 3.0) return a % a % a;
  return arma::pow(a, p);
}
}  // namespace

// ---- binary ---------------------------------------------------------------
// The tangents have their inputs' shapes, so a rule written with these same
// ops broadcasts exactly as the forward did; backward sums over broadcast
// dimensions (ops/broadcast.h).

const OpDef& add_def() {
  static const OpDef def{"add", 2, "y = a + b", "da = dy; db = dy", "dy = da + db",
                         [](J j) { return j.dx[0] + j.dx[1]; }};
  return def;
}
Var add(Var a, Var b) {
  const OpDef& def = add_def();
  Tape& t = tape_of(def.name, a, b);
  Shape s = broadcast_shape(def.name, a.value(), b.value());
  arma::mat y = broadcast_apply(a.value(), b.value(), s, std::plus<>());
  return t.record(def, {a, b}, std::move(y), [](Tape& t, const Node& n) {
    accumulate_unbroadcast(t, in0(n), n.grad);
    accumulate_unbroadcast(t, in1(n), t.take_grad(n));  // dy's last read
  });
}

const OpDef& sub_def() {
  static const OpDef def{"sub", 2, "y = a - b", "da = dy; db = -dy", "dy = da - db",
                         [](J j) { return j.dx[0] - j.dx[1]; }};
  return def;
}
Var sub(Var a, Var b) {
  const OpDef& def = sub_def();
  Tape& t = tape_of(def.name, a, b);
  Shape s = broadcast_shape(def.name, a.value(), b.value());
  arma::mat y = broadcast_apply(a.value(), b.value(), s, std::minus<>());
  return t.record(def, {a, b}, std::move(y), [](Tape& t, const Node& n) {
    arma::mat db = -n.grad;
    accumulate_unbroadcast(t, in0(n), t.take_grad(n));  // dy's last read; a first, then b, as always
    accumulate_unbroadcast(t, in1(n), std::move(db));
  });
}

const OpDef& mul_def() {
  static const OpDef def{"mul", 2, "y = a * b", "da = dy * b; db = dy * a", "dy = da * b + a * db",
                         [](J j) { return j.dx[0] * j.x[1] + j.x[0] * j.dx[1]; }};
  return def;
}
Var mul(Var a, Var b) {
  const OpDef& def = mul_def();
  Tape& t = tape_of(def.name, a, b);
  Shape s = broadcast_shape(def.name, a.value(), b.value());
  arma::mat y = broadcast_apply(a.value(), b.value(), s, std::multiplies<>());
  return t.record(
      def, {a, b}, std::move(y),
      [](Tape& t, const Node& n) {
        Shape s{n.value.n_rows, n.value.n_cols};
        accumulate_unbroadcast(t, in0(n), broadcast_apply(n.grad, t.value(in1(n)), s, std::multiplies<>()));
        accumulate_unbroadcast(t, in1(n), broadcast_apply(n.grad, t.value(in0(n)), s, std::multiplies<>()));
      },
      Saved{{a, b}});
}

const OpDef& div_def() {
  static const OpDef def{"div", 2, "y = a / b", "da = dy / b; db = -dy * a / b^2", "dy = (da - y * db) / b",
                         [](J j) { return (j.dx[0] - j.y * j.dx[1]) / j.x[1]; }};
  return def;
}
Var div(Var a, Var b) {
  const OpDef& def = div_def();
  Tape& t = tape_of(def.name, a, b);
  Shape s = broadcast_shape(def.name, a.value(), b.value());
  arma::mat y = broadcast_apply(a.value(), b.value(), s, std::divides<>());
  return t.record(
      def, {a, b}, std::move(y),
      [](Tape& t, const Node& n) {
        Shape s{n.value.n_rows, n.value.n_cols};
        const arma::mat &a = t.value(in0(n)), &b = t.value(in1(n));
        accumulate_unbroadcast(t, in0(n), broadcast_apply(n.grad, b, s, std::divides<>()));
        const arma::mat dy_a = broadcast_apply(n.grad, a, s, std::multiplies<>());
        accumulate_unbroadcast(t, in1(n), broadcast_apply(dy_a, b, s, [](double g, double v) { return -g / (v * v); }));
      },
      Saved{{a, b}});
}

const OpDef& neg_def() {
  static const OpDef def{"neg", 1, "y = -a", "da = -dy", "dy = -da", [](J j) { return -j.dx[0]; }};
  return def;
}
Var neg(Var a) {
  const OpDef& def = neg_def();
  Tape& t = tape_of(def.name, a);
  return t.record(def, {a}, -a.value(), [](Tape& t, const Node& n) { t.accumulate(in0(n), -n.grad); });
}

// ---- with a plain number ----------------------------------------------------
// The number is the node's attribute, which the rule reads back.

const OpDef& add_scalar_def() {
  static const OpDef def{"add_scalar", 1, "y = a + c", "da = dy", "dy = da", [](J j) { return j.dx[0]; }};
  return def;
}
Var add_scalar(Var a, double c) {
  const OpDef& def = add_scalar_def();
  Tape& t = tape_of(def.name, a);
  Var y = t.record(def, {a}, a.value() + c, [](Tape& t, const Node& n) { t.accumulate(in0(n), t.take_grad(n)); });
  t.set_attribute(y, "c", c);
  return y;
}

const OpDef& mul_scalar_def() {
  static const OpDef def{"mul_scalar", 1, "y = c * a", "da = c * dy", "dy = c * da",
                         [](J j) { return attribute(j.node, "c") * j.dx[0]; }};
  return def;
}
Var mul_scalar(Var a, double c) {
  const OpDef& def = mul_scalar_def();
  Tape& t = tape_of(def.name, a);
  Var y = t.record(def, {a}, a.value() * c, [c](Tape& t, const Node& n) { t.accumulate(in0(n), c * n.grad); });
  t.set_attribute(y, "c", c);
  return y;
}

const OpDef& pow_scalar_def() {
  static const OpDef def{"pow_scalar", 1, "y = a^p", "da = dy * p * a^(p-1)", "dy = p * a^(p-1) * da",
                         [](J j) {
                           const double p = attribute(j.node, "p");
                           return p * pow_scalar(j.x[0], p - 1.0) * j.dx[0];
                         }};
  return def;
}
Var pow_scalar(Var a, double p) {
  const OpDef& def = pow_scalar_def();
  Tape& t = tape_of(def.name, a);
  Var y = t.record(
      def, {a}, power(a.value(), p),
      [p](Tape& t, const Node& n) {
        t.accumulate(in0(n), n.grad % (p * power(t.value(in0(n)), p - 1.0)));
      },
      Saved{{a}});
  t.set_attribute(y, "p", p);
  return y;
}

const OpDef& scalar_div_def() {
  static const OpDef def = composed_op("c / a", 1, "y = c / a  (double / Var)",
                                       "derived by the tape from c * a^-1 (pow_scalar, mul_scalar)");
  return def;
}

}  // namespace ag
