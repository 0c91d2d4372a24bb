// %% [markdown]
// # Lesson 01: the tape from scratch
//
// Reverse-mode automatic differentiation needs only two ideas:
//
// 1. **Forward**: run the computation and write down every operation on a list,
//    the *tape* (a Wengert list), in the order it ran.
// 2. **Backward**: walk the list from the end to the start; each entry turns the
//    gradient of its output into gradients of its inputs (the chain rule, one
//    step at a time), and adds them (`+=`) into those inputs.
//
// In this lesson we compute the same gradients twice: once by hand with the chain
// rule, once by the tape, and check that they agree.
//
// This file is a notebook: a C++ program in jupytext's "percent" format. Each
// `NB_CELL` block runs in order; `autograd notebook render` shows what it printed.

// %%
#include <cmath>
#include <iostream>

#include "check/listing.h"
#include "notebooks/notebook.h"
#include "ops/ops.h"

using ag::Tape;
using ag::Var;

// A 1x1 matrix from a number: every value on the tape is a matrix, scalars too.
arma::mat scalar(double x) { return arma::mat(1, 1, arma::fill::value(x)); }

// %% [markdown]
// ## A first expression: f(a, b) = (a + b) * b
//
// With a = 2 and b = 3, f = (2 + 3) * 3 = 15. We record it on a tape. `leaf`
// marks a value we want the gradient of; every op appends one node.

// %%
NB_CELL {
  Tape tape;
  Var a = tape.leaf(scalar(2.0), "a");
  Var b = tape.leaf(scalar(3.0), "b");
  Var s = a + b;  // node 2: add
  Var f = s * b;  // node 3: mul
  std::cout << "f = " << f.value()(0) << "\n\n" << ag::format_tape(tape);
  nb::check_close("f", f.value()(0), 15.0, 0.0);
}

// %% [markdown]
// The listing reads top to bottom like the program: two leaves, then `add`
// (inputs 0 and 1), then `mul` (inputs 2 and 1). The last column is what each node
// keeps for its backward: `mul` needs both of its inputs (d(s*b)/ds = b and
// d(s*b)/db = s), `add` needs nothing, because its derivative is 1 whatever the inputs.
//
// ## Backward by hand
//
// Start from df/df = 1 and go backwards through the list:
//
// - node 3, f = s * b: df/ds = b = 3, and b's first share df/db = s = 5;
// - node 2, s = a + b: df/da = df/ds * 1 = 3, and b's second share df/ds * 1 = 3.
//
// b was used twice, so its gradient is the **sum** of both shares: 5 + 3 = 8.
// Check with calculus: f = ab + b^2, so df/da = b = 3 and df/db = a + 2b = 8.

// %%
NB_CELL {
  const double a = 2.0, b = 3.0;
  const double s = a + b;
  const double df_ds = b;         // node 3 (mul), towards s
  const double df_db_mul = s;     // node 3 (mul), towards b
  const double df_da = df_ds;     // node 2 (add) passes the gradient through
  const double df_db_add = df_ds;
  const double df_db = df_db_mul + df_db_add;
  std::cout << "by hand: df/da = " << df_da << ", df/db = " << df_db_mul << " + " << df_db_add
            << " = " << df_db << "\n";

  Tape tape;
  Var va = tape.leaf(scalar(a), "a");
  Var vb = tape.leaf(scalar(b), "b");
  Var f = (va + vb) * vb;
  tape.backward(f);
  std::cout << "by the tape: df/da = " << va.grad()(0) << ", df/db = " << vb.grad()(0) << "\n";
  nb::check_close("tape df/da", va.grad()(0), df_da, 1e-15);
  nb::check_close("tape df/db", vb.grad()(0), df_db, 1e-15);
}

// %% [markdown]
// ## A longer chain: g(x) = tanh(x^2 + exp(x))
//
// Each node's backward only needs its local derivative:
//
// | node | forward | local derivative |
// |---|---|---|
// | u = x^2 | square | du/dx = 2x |
// | v = exp(x) | exp | dv/dx = exp(x) = v |
// | w = u + v | add | 1 and 1 |
// | g = tanh(w) | tanh | dg/dw = 1 - g^2 |
//
// The chain rule multiplies along each path and adds the paths:
// dg/dx = (1 - g^2) (2x + exp(x)).

// %%
NB_CELL {
  const double x = 0.5;
  const double g = std::tanh(x * x + std::exp(x));
  const double by_hand = (1 - g * g) * (2 * x + std::exp(x));

  Tape tape;
  Var vx = tape.leaf(scalar(x), "x");
  Var u = ag::square(vx);
  Var v = ag::exp(vx);
  Var vg = ag::tanh(u + v);
  std::cout << ag::format_tape(tape) << "\n";
  tape.backward(vg);
  std::cout << "g(0.5) = " << vg.value()(0) << "\n"
            << "dg/dx by hand    = " << by_hand << "\n"
            << "dg/dx by the tape = " << vx.grad()(0) << "\n";
  nb::check_close("dg/dx, tape against hand", vx.grad()(0), by_hand, 1e-14);
}

// %% [markdown]
// ## Matrices work the same way
//
// The same machinery runs on matrices. Here y = sum(tanh(x W + b)) for one sample
// x (1x2), weights W (2x2) and a bias b (1x2). The chain rule gives
//
// - dy/dz = 1 - tanh(z)^2 for z = x W + b (element by element),
// - dy/dW = x^T dz, dy/dx = dz W^T, dy/db = dz.

// %%
NB_CELL {
  const arma::mat x = {{1.0, -2.0}};
  const arma::mat W = {{0.5, -1.0}, {0.25, 2.0}};
  const arma::mat b = {{0.1, -0.1}};

  const arma::mat z = x * W + b;
  const arma::mat dz = 1 - arma::square(arma::tanh(z));
  const arma::mat dW_hand = x.t() * dz;
  const arma::mat dx_hand = dz * W.t();

  Tape tape;
  Var vx = tape.leaf(x, "x");
  Var vW = tape.leaf(W, "W");
  Var vb = tape.leaf(b, "b");
  Var y = ag::sum(ag::tanh(ag::matmul(vx, vW) + vb));
  std::cout << ag::format_tape(tape) << "\n";
  tape.backward(y);
  nb::show("dy/dW by the tape", vW.grad());
  nb::show("dy/dW by hand", dW_hand);
  nb::check_close("dy/dW", vW.grad(), dW_hand, 1e-14);
  nb::check_close("dy/dx", vx.grad(), dx_hand, 1e-14);
  nb::check_close("dy/db", vb.grad(), dz, 1e-14);
}

// %% [markdown]
// ## What to remember
//
// - The tape is a list in execution order; backward is one loop over it in reverse.
// - Each node knows only its local derivative; the loop multiplies them together.
// - A value used twice receives the sum of the gradients from each use.
// - A node keeps (saves) exactly what its local derivative needs: that is the
//   memory cost of backward, studied in lesson 08.
