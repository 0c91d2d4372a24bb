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
#include <sstream>
#include <string>

#include "check/listing.h"
#include "notebooks/notebook.h"
#include "ops/ops.h"

using ag::Tape;
using ag::Var;

// A 1x1 matrix from a number: every value on the tape is a matrix, scalars too.
arma::mat scalar(double x) { return arma::mat(1, 1, arma::fill::value(x)); }

// %% [markdown]
// ## A first expression: $f(a, b) = (a + b) \, b$
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
// - node 3, $f = s b$: $\partial f/\partial s = b = 3$, and b's first share $\partial f/\partial b = s = 5$;
// - node 2, $s = a + b$: $\partial f/\partial a = \partial f/\partial s \cdot 1 = 3$, and b's second share $\partial f/\partial s \cdot 1 = 3$.
//
// b was used twice, so its gradient is the **sum** of both shares: 5 + 3 = 8.
// Check with calculus: $f = ab + b^2$, so $\partial f/\partial a = b = 3$ and $\partial f/\partial b = a + 2b = 8$.

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
// ## A longer chain: $g(x) = \tanh(x^2 + e^x)$
//
// Each node's backward only needs its local derivative:
//
// | node | forward | local derivative |
// |---|---|---|
// | $u = x^2$ | square | $du/dx = 2x$ |
// | $v = e^x$ | exp | $dv/dx = e^x = v$ |
// | $w = u + v$ | add | 1 and 1 |
// | $g = \tanh(w)$ | tanh | $dg/dw = 1 - g^2$ |
//
// The chain rule multiplies along each path and adds the paths:
// $dg/dx = (1 - g^2)(2x + e^x)$.

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
// The same machinery runs on matrices. Here $y = \sum \tanh(x W + b)$ for one sample
// x (1x2), weights W (2x2) and a bias b (1x2). The chain rule gives
//
// - $dy/dz = 1 - \tanh(z)^2$ for $z = x W + b$ (element by element),
// - $dy/dW = x^T dz$, $dy/dx = dz \, W^T$, $dy/db = dz$.

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
// ## The graph, with every value and gradient
//
// micrograd's `draw_dot` draws an expression as a graph with each node's value
// and gradient; we do the same for f = (a + b) * b after backward. (`autograd
// graph --what demo --out g.dot --png g.png` draws a tape's structure, with
// shapes and saved bytes, for the expressions it knows.) Edges run from inputs
// to the node that used them; backward runs against the arrows.

// %%
// A 1x1 tape as a Graphviz graph: "#id op", its value and its gradient.
std::string graph_with_gradients(const Tape& tape) {
  std::ostringstream dot;
  dot << "digraph f {\n  rankdir=LR;\n  node [shape=record, fontname=\"Helvetica\", fontsize=11];\n";
  for (std::size_t id = 0; id < tape.size(); ++id) {
    const ag::Node& n = tape.node(id);
    dot << "  n" << id << " [label=\"{#" << id << " " << n.op << " | value " << n.value(0) << " | grad "
        << (n.grad.n_elem ? n.grad(0) : 0.0) << "}\"];\n";
    for (std::size_t k : n.inputs) dot << "  n" << k << " -> n" << id << ";\n";
  }
  return dot.str() + "}\n";
}

NB_CELL {
  Tape tape;
  Var a = tape.leaf(2.0, "a");
  Var b = tape.leaf(3.0, "b");
  Var s = a + b;
  Var f = s * b;
  tape.backward(f);
  nb::graph("graph", graph_with_gradients(tape));
  nb::check(f.grad()(0) == 1 && s.grad()(0) == 3 && a.grad()(0) == 3 && b.grad()(0) == 8,
            "after backward: df/df = 1, df/ds = 3, df/da = 3, df/db = 8");
}

// %% [markdown]
// ## Why no graph search is needed
//
// micrograd sorts its nodes topologically (a depth-first search) before
// backward. This tape does not: an op can only be recorded with inputs that
// already exist, so every input has a smaller id than the node that uses it,
// and every arrow in the graph above points from a smaller id to a larger one.
// Walking the ids from the largest down therefore reaches every node after all
// the nodes that used it: when its backward runs, its gradient is complete.
// Execution order is a topological order, for free.
//
// ## Why `+=` and not `=`
//
// b's gradient arrives in two shares, 5 from `mul` and then 3 from `add`. If a
// node *assigned* its share instead of adding it, the last share would win and
// b's gradient would be 3. Every value used more than once would be wrong:
// b here, x in g(x) = tanh(x^2 + exp(x)) above, x in x * x.
//
// Adding has a consequence of its own: leaves keep adding across backward
// passes. Run backward twice without resetting, and every leaf gradient doubles.
// That is why a training step zeroes the gradients (`zero_grad`) first.

// %%
NB_CELL {
  const double shares_in_backward_order[] = {5.0, 3.0};  // mul's share, then add's
  double added = 0, assigned = 0;
  for (double share : shares_in_backward_order) {
    added += share;
    assigned = share;
  }
  std::cout << "b's gradient with +=: " << added << ", with =: " << assigned << " (the last share)\n";

  Tape tape;
  Var a = tape.leaf(2.0, "a");
  Var b = tape.leaf(3.0, "b");
  Var f = (a + b) * b;
  tape.backward(f, /*retain_graph=*/true);
  const double once = b.grad()(0);
  tape.backward(f);
  std::cout << "df/db after one backward: " << once << ", after a second one: " << b.grad()(0) << "\n";
  nb::check(added == 8 && assigned == 3, "adding the shares gives 8; assigning keeps only the last, 3");
  nb::check(once == 8 && b.grad()(0) == 16, "a second backward adds again: the leaf gradient doubles to 16");
}

// %% [markdown]
// ## Forward mode and reverse mode
//
// There is a second way to apply the chain rule: carry, next to every value,
// its derivative along one chosen input direction, forward through the
// computation. That is **forward mode**, and a "dual number" (value,
// derivative) is all it needs. One forward pass gives the derivative of every
// output along **one input** direction (a column J v of the Jacobian); the
// tape's **reverse mode** gives the gradient of **one output** with respect to
// every input (a row u^T J) in one backward.
//
// | | one pass gives | passes for all of J (n inputs, m outputs) | memory |
// |---|---|---|---|
// | forward mode | J v, one column | n | none beyond the values in flight |
// | reverse mode | u^T J, one row | m | the tape: every saved value until backward |
//
// A loss is one output of millions of parameters (m = 1, n = 10^6): reverse
// mode gives its gradient in one backward, at a small constant multiple of the
// forward's cost, where forward mode would need 10^6 passes. That is why deep
// learning uses reverse mode, and pays for it in memory (lesson 08).

// %%
// A dual number: a value and its derivative along one input direction.
struct Dual {
  double value, derivative;
};
Dual operator+(Dual x, Dual y) { return {x.value + y.value, x.derivative + y.derivative}; }
Dual operator*(Dual x, Dual y) { return {x.value * y.value, x.derivative * y.value + x.value * y.derivative}; }

NB_CELL {
  // Forward mode: one pass per input, seeding that input's derivative with 1.
  const Dual along_a = (Dual{2, 1} + Dual{3, 0}) * Dual{3, 0};
  const Dual along_b = (Dual{2, 0} + Dual{3, 1}) * Dual{3, 1};
  std::cout << "forward mode, 2 passes: df/da = " << along_a.derivative << ", df/db = " << along_b.derivative << "\n";

  // Reverse mode: one backward gives both.
  Tape tape;
  Var a = tape.leaf(2.0, "a");
  Var b = tape.leaf(3.0, "b");
  tape.backward((a + b) * b);
  std::cout << "reverse mode, 1 backward: df/da = " << a.grad()(0) << ", df/db = " << b.grad()(0) << "\n";
  nb::check(along_a.derivative == a.grad()(0) && along_b.derivative == b.grad()(0),
            "two forward-mode passes and one reverse-mode pass give the same gradient");
}

// %% [markdown]
// ## What to remember
//
// - The tape is a list in execution order; backward is one loop over it in reverse.
// - Each node knows only its local derivative; the loop multiplies them together.
// - A value used twice receives the sum of the gradients from each use (`+=`); with `=` the
//   last share would win. Leaves keep adding across backward calls: zero them each step.
// - Recording order is a topological order, so backward needs no graph search.
// - Reverse mode: one backward per output; forward mode: one pass per input.
// - A node keeps (saves) exactly what its local derivative needs: that is the
//   memory cost of backward, studied in lesson 08.

// %% [markdown]
// ## Exercises
//
// 1. (easy) **By hand, then by the tape.** For f(a, b) = a * b + a at a = 2, b = 3,
//    write the tape (nodes and their inputs), walk it backwards by hand, and
//    give df/da and df/db. Then record it with `Tape` and check your numbers.
// 2. (medium) **`=` instead of `+=`.** Suppose `Tape::accumulate` *assigned* the
//    gradient instead of adding it. In f = (a + b) * b (the first example),
//    which value would b's gradient end with, and why that one? Which other
//    expression of this lesson would also come out wrong?
// 3. (medium) **No graph search.** micrograd sorts its graph topologically (a
//    depth-first search) before backward; this tape just walks its list in
//    reverse. Explain why the order in which nodes were recorded is already a
//    topological order, so that when a node's backward runs its gradient is
//    complete.
// 4. (easy) **Forward or reverse mode.** For f from R^n to R^m, forward mode gives one
//    column of the Jacobian (J v) per pass and reverse mode one row (u^T J).
//    How many passes does each need for the full Jacobian? Which one would you
//    use for a loss of 10^6 parameters, and what does reverse mode pay for it?
// 5. (medium) **x to the x.** Build h(x) = x^x from this lesson's ops and one more,
//    `ag::log` (hint: x^x = exp(x log x)), and check dh/dx at x = 2 against
//    calculus.
