// Element-wise ops: binary (with broadcasting), scalar, and unary functions.
// Each one's definition (name, formulas, forward-mode rule), forward and
// backward sit side by side in elementwise.cpp (unary: elementwise_unary.cpp).
#pragma once

#include "autograd/tape.h"

namespace ag {

// Binary, broadcasting a 1xD row, an Nx1 column or a 1x1 scalar against NxD.
Var add(Var a, Var b);  // a + b
Var sub(Var a, Var b);  // a - b
Var mul(Var a, Var b);  // a * b  (element-wise)
Var div(Var a, Var b);  // a / b
Var neg(Var a);         // -a

// With a plain number.
Var add_scalar(Var a, double c);  // a + c
Var mul_scalar(Var a, double c);  // c * a
Var pow_scalar(Var a, double p);  // a ^ p

// Unary functions.
Var exp(Var a);
Var log(Var a);
Var sqrt(Var a);
Var square(Var a);
Var tanh(Var a);
Var sigmoid(Var a);
Var relu(Var a);

// What each op is (autograd/tape.h's OpDef): the op table and tools read these.
const OpDef& add_def();
const OpDef& sub_def();
const OpDef& mul_def();
const OpDef& div_def();
const OpDef& neg_def();
const OpDef& add_scalar_def();
const OpDef& mul_scalar_def();
const OpDef& pow_scalar_def();
const OpDef& exp_def();
const OpDef& log_def();
const OpDef& sqrt_def();
const OpDef& square_def();
const OpDef& tanh_def();
const OpDef& sigmoid_def();
const OpDef& relu_def();

inline Var operator+(Var a, Var b) { return add(a, b); }
inline Var operator-(Var a, Var b) { return sub(a, b); }
inline Var operator*(Var a, Var b) { return mul(a, b); }
inline Var operator/(Var a, Var b) { return div(a, b); }
inline Var operator-(Var a) { return neg(a); }
inline Var operator+(Var a, double c) { return add_scalar(a, c); }
inline Var operator+(double c, Var a) { return add_scalar(a, c); }
inline Var operator-(Var a, double c) { return add_scalar(a, -c); }
inline Var operator-(double c, Var a) { return add_scalar(neg(a), c); }
inline Var operator*(Var a, double c) { return mul_scalar(a, c); }
inline Var operator*(double c, Var a) { return mul_scalar(a, c); }
inline Var operator/(Var a, double c) { return mul_scalar(a, 1.0 / c); }
inline Var operator/(double c, Var a) { return mul_scalar(pow_scalar(a, -1.0), c); }  // c * a^-1
// c / a's name and formulas (composed: no node carries it).
const OpDef& scalar_div_def();

}  // namespace ag
