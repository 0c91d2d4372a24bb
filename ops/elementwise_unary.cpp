// The unary functions of ops/elementwise.h: exp, log, sqrt, square, tanh,
// sigmoid, relu. Each rule reuses what its backward reads (y or a).
#include <algorithm>
#include <cmath>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "ops/elementwise.h"

namespace ag {

namespace {
std::size_t in0(const Node& n) { return n.inputs[0]; }
using J = const JvpArgs&;

#if defined(__AVX2__)
// glibc's vector tanh, four doubles a call (libmvec, which libm.so's linker
// script links as needed): 4.4 ns an element here against the scalar tanh's
// 15, and as accurate: about 2 ulp at most from the exact value, as the
// scalar is (tests/test_numerics.cpp measures both against long double).
extern "C" __m256d _ZGVdN4v_tanh(__m256d);
#endif

// tanh of every element: the composed GELU takes one on every element of the
// FFN, and was a tenth of a GPT step in scalar tanh. The last partial group
// of four is padded and goes through the same vector function, so a value's
// tanh does not depend on where it sits in the matrix.
arma::mat tanh_of(const arma::mat& a) {
#if defined(__AVX2__)
  arma::mat y(arma::size(a), arma::fill::none);
  const double* x = a.memptr();
  double* out = y.memptr();
  const arma::uword n = a.n_elem, whole = n - n % 4;
  for (arma::uword i = 0; i < whole; i += 4) _mm256_storeu_pd(out + i, _ZGVdN4v_tanh(_mm256_loadu_pd(x + i)));
  if (whole < n) {
    double in[4] = {0.0, 0.0, 0.0, 0.0}, last[4];
    std::copy(x + whole, x + n, in);
    _mm256_storeu_pd(last, _ZGVdN4v_tanh(_mm256_loadu_pd(in)));
    std::copy(last, last + (n - whole), out + whole);
  }
  return y;
#else
  return arma::tanh(a);
#endif
}
}  // namespace

const OpDef& exp_def() {
  static const OpDef def{"exp", 1, "y = exp(a)", "da = dy * y", "dy = y * da", [](J j) { return j.y * j.dx[0]; }};
  return def;
}
Var exp(Var a) {
  const OpDef& def = exp_def();
  Tape& t = tape_of(def.name, a);
  return t.record(
      def, {a}, arma::exp(a.value()), [](Tape& t, const Node& n) { t.accumulate(in0(n), n.grad % n.value); },
      Saved::output_only());
}

const OpDef& log_def() {
  static const OpDef def{"log", 1, "y = log(a)", "da = dy / a", "dy = da / a", [](J j) { return j.dx[0] / j.x[0]; }};
  return def;
}
Var log(Var a) {
  const OpDef& def = log_def();
  Tape& t = tape_of(def.name, a);
  return t.record(
      def, {a}, arma::log(a.value()),
      [](Tape& t, const Node& n) { t.accumulate(in0(n), n.grad / t.value(in0(n))); }, Saved{{a}});
}

const OpDef& sqrt_def() {
  static const OpDef def{"sqrt", 1, "y = sqrt(a)", "da = dy / (2 y)", "dy = da / (2 y)",
                         [](J j) { return j.dx[0] / (2.0 * j.y); }};
  return def;
}
Var sqrt(Var a) {
  const OpDef& def = sqrt_def();
  Tape& t = tape_of(def.name, a);
  return t.record(
      def, {a}, arma::sqrt(a.value()),
      [](Tape& t, const Node& n) { t.accumulate(in0(n), n.grad / (2.0 * n.value)); }, Saved::output_only());
}

const OpDef& square_def() {
  static const OpDef def{"square", 1, "y = a^2", "da = 2 a dy", "dy = 2 a da",
                         [](J j) { return 2.0 * j.x[0] * j.dx[0]; }};
  return def;
}
Var square(Var a) {
  const OpDef& def = square_def();
  Tape& t = tape_of(def.name, a);
  return t.record(
      def, {a}, arma::square(a.value()),
      [](Tape& t, const Node& n) { t.accumulate(in0(n), 2.0 * n.grad % t.value(in0(n))); }, Saved{{a}});
}

const OpDef& tanh_def() {
  static const OpDef def{"tanh", 1, "y = tanh(a)", "da = dy * (1 - y^2)", "dy = (1 - y^2) * da",
                         [](J j) { return (1.0 - square(j.y)) * j.dx[0]; }};
  return def;
}
Var tanh(Var a) {
  const OpDef& def = tanh_def();
  Tape& t = tape_of(def.name, a);
  return t.record(
      def, {a}, tanh_of(a.value()),
      [](Tape& t, const Node& n) { t.accumulate(in0(n), n.grad % (1.0 - arma::square(n.value))); },
      Saved::output_only());
}

const OpDef& sigmoid_def() {
  static const OpDef def{"sigmoid", 1, "y = 1 / (1 + exp(-a))", "da = dy * y * (1 - y)", "dy = y * (1 - y) * da",
                         [](J j) { return j.y * (1.0 - j.y) * j.dx[0]; }};
  return def;
}
Var sigmoid(Var a) {
  const OpDef& def = sigmoid_def();
  Tape& t = tape_of(def.name, a);
  // Both branches of the logistic function, so neither exp overflows.
  arma::mat y = a.value();
  y.transform([](double v) {
    if (v >= 0) return 1.0 / (1.0 + std::exp(-v));
    const double e = std::exp(v);
    return e / (1.0 + e);
  });
  return t.record(
      def, {a}, std::move(y),
      [](Tape& t, const Node& n) { t.accumulate(in0(n), n.grad % n.value % (1.0 - n.value)); }, Saved::output_only());
}

// The rule's mask is a constant: relu's second derivative is 0 away from the kink.
const OpDef& relu_def() {
  static const OpDef def{"relu", 1, "y = max(a, 0)", "da = dy where a > 0, else 0", "dy = da where a > 0, else 0",
                         [](J j) {
                           const arma::mat mask = arma::conv_to<arma::mat>::from(j.y.value() > 0.0);
                           return j.dx[0] * j.tape.constant(mask, "a>0");
                         }};
  return def;
}
Var relu(Var a) {
  const OpDef& def = relu_def();
  Tape& t = tape_of(def.name, a);
  return t.record(
      def, {a}, arma::clamp(a.value(), 0.0, arma::datum::inf),
      [](Tape& t, const Node& n) {
        t.accumulate(in0(n), n.grad % arma::conv_to<arma::mat>::from(n.value > 0.0));
      },
      Saved::output_only());
}

}  // namespace ag
