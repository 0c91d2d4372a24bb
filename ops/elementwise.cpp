#include "ops/elementwise.h"

#include <cmath>
#include <functional>

#include "ops/broadcast.h"

namespace ag {

namespace {
std::size_t in0(const Node& n) { return n.inputs[0]; }
std::size_t in1(const Node& n) { return n.inputs[1]; }
}  // namespace

// ---- binary ---------------------------------------------------------------

// y = a + b;  da = dy, db = dy (summed over broadcast dimensions)
Var add(Var a, Var b) {
  Tape& t = tape_of("add", a, b);
  Shape s = broadcast_shape("add", a.value(), b.value());
  arma::mat y = broadcast_apply(a.value(), b.value(), s, std::plus<>());
  return t.record("add", {a, b}, std::move(y), [](Tape& t, const Node& n) {
    accumulate_unbroadcast(t, in0(n), n.grad);
    accumulate_unbroadcast(t, in1(n), n.grad);
  });
}

// y = a - b;  da = dy, db = -dy
Var sub(Var a, Var b) {
  Tape& t = tape_of("sub", a, b);
  Shape s = broadcast_shape("sub", a.value(), b.value());
  arma::mat y = broadcast_apply(a.value(), b.value(), s, std::minus<>());
  return t.record("sub", {a, b}, std::move(y), [](Tape& t, const Node& n) {
    accumulate_unbroadcast(t, in0(n), n.grad);
    accumulate_unbroadcast(t, in1(n), -n.grad);
  });
}

// y = a * b;  da = dy * b, db = dy * a
Var mul(Var a, Var b) {
  Tape& t = tape_of("mul", a, b);
  Shape s = broadcast_shape("mul", a.value(), b.value());
  arma::mat y = broadcast_apply(a.value(), b.value(), s, std::multiplies<>());
  return t.record(
      "mul", {a, b}, std::move(y),
      [](Tape& t, const Node& n) {
        Shape s{n.value.n_rows, n.value.n_cols};
        accumulate_unbroadcast(t, in0(n), broadcast_apply(n.grad, t.value(in1(n)), s, std::multiplies<>()));
        accumulate_unbroadcast(t, in1(n), broadcast_apply(n.grad, t.value(in0(n)), s, std::multiplies<>()));
      },
      Saved{{a, b}});
}

// y = a / b;  da = dy / b, db = -dy * a / b^2
Var div(Var a, Var b) {
  Tape& t = tape_of("div", a, b);
  Shape s = broadcast_shape("div", a.value(), b.value());
  arma::mat y = broadcast_apply(a.value(), b.value(), s, std::divides<>());
  return t.record(
      "div", {a, b}, std::move(y),
      [](Tape& t, const Node& n) {
        Shape s{n.value.n_rows, n.value.n_cols};
        const arma::mat &a = t.value(in0(n)), &b = t.value(in1(n));
        accumulate_unbroadcast(t, in0(n), broadcast_apply(n.grad, b, s, std::divides<>()));
        const arma::mat dy_a = broadcast_apply(n.grad, a, s, std::multiplies<>());
        accumulate_unbroadcast(t, in1(n), broadcast_apply(dy_a, b, s, [](double g, double v) { return -g / (v * v); }));
      },
      Saved{{a, b}});
}

// y = -a;  da = -dy
Var neg(Var a) {
  Tape& t = tape_of("neg", a);
  return t.record("neg", {a}, -a.value(), [](Tape& t, const Node& n) { t.accumulate(in0(n), -n.grad); });
}

// ---- with a plain number ----------------------------------------------------

// y = a + c;  da = dy
Var add_scalar(Var a, double c) {
  Tape& t = tape_of("add_scalar", a);
  Var y = t.record("add_scalar", {a}, a.value() + c,
                   [](Tape& t, const Node& n) { t.accumulate(in0(n), n.grad); });
  t.set_attribute(y, "c", c);
  return y;
}

// y = c * a;  da = c * dy
Var mul_scalar(Var a, double c) {
  Tape& t = tape_of("mul_scalar", a);
  Var y = t.record("mul_scalar", {a}, a.value() * c,
                   [c](Tape& t, const Node& n) { t.accumulate(in0(n), c * n.grad); });
  t.set_attribute(y, "c", c);
  return y;
}

// y = a^p;  da = dy * p * a^(p-1)
Var pow_scalar(Var a, double p) {
  Tape& t = tape_of("pow_scalar", a);
  Var y = t.record(
      "pow_scalar", {a}, arma::pow(a.value(), p),
      [p](Tape& t, const Node& n) {
        t.accumulate(in0(n), n.grad % (p * arma::pow(t.value(in0(n)), p - 1.0)));
      },
      Saved{{a}});
  t.set_attribute(y, "p", p);
  return y;
}

// ---- unary functions --------------------------------------------------------

// y = exp(a);  da = dy * y
Var exp(Var a) {
  Tape& t = tape_of("exp", a);
  return t.record(
      "exp", {a}, arma::exp(a.value()),
      [](Tape& t, const Node& n) { t.accumulate(in0(n), n.grad % n.value); },
      Saved{{}, true});
}

// y = log(a);  da = dy / a
Var log(Var a) {
  Tape& t = tape_of("log", a);
  return t.record(
      "log", {a}, arma::log(a.value()),
      [](Tape& t, const Node& n) { t.accumulate(in0(n), n.grad / t.value(in0(n))); },
      Saved{{a}});
}

// y = sqrt(a);  da = dy / (2 y)
Var sqrt(Var a) {
  Tape& t = tape_of("sqrt", a);
  return t.record(
      "sqrt", {a}, arma::sqrt(a.value()),
      [](Tape& t, const Node& n) { t.accumulate(in0(n), n.grad / (2.0 * n.value)); },
      Saved{{}, true});
}

// y = a^2;  da = 2 a dy
Var square(Var a) {
  Tape& t = tape_of("square", a);
  return t.record(
      "square", {a}, arma::square(a.value()),
      [](Tape& t, const Node& n) { t.accumulate(in0(n), 2.0 * n.grad % t.value(in0(n))); },
      Saved{{a}});
}

// y = tanh(a);  da = dy * (1 - y^2)
Var tanh(Var a) {
  Tape& t = tape_of("tanh", a);
  return t.record(
      "tanh", {a}, arma::tanh(a.value()),
      [](Tape& t, const Node& n) { t.accumulate(in0(n), n.grad % (1.0 - arma::square(n.value))); },
      Saved{{}, true});
}

// y = 1 / (1 + exp(-a));  da = dy * y * (1 - y)
Var sigmoid(Var a) {
  Tape& t = tape_of("sigmoid", a);
  // Both branches of the logistic function, so neither exp overflows.
  arma::mat y = a.value();
  y.transform([](double v) {
    if (v >= 0) return 1.0 / (1.0 + std::exp(-v));
    const double e = std::exp(v);
    return e / (1.0 + e);
  });
  return t.record(
      "sigmoid", {a}, std::move(y),
      [](Tape& t, const Node& n) { t.accumulate(in0(n), n.grad % n.value % (1.0 - n.value)); },
      Saved{{}, true});
}

// y = max(a, 0);  da = dy where a > 0, else 0
Var relu(Var a) {
  Tape& t = tape_of("relu", a);
  return t.record(
      "relu", {a}, arma::clamp(a.value(), 0.0, arma::datum::inf),
      [](Tape& t, const Node& n) {
        t.accumulate(in0(n), n.grad % arma::conv_to<arma::mat>::from(n.value > 0.0));
      },
      Saved{{}, true});
}

}  // namespace ag
