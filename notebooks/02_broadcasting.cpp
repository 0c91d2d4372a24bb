// %% [markdown]
// # Lesson 02: broadcasting and reductions
//
// A bias b of shape 1xD is added to every row of an NxD matrix. Nobody copies b
// N times by hand, the op *broadcasts* it: the one row stands in for N copies.
// This lesson shows, on numbers, the rule that follows:
//
// > **The gradient of a broadcast is a sum.** Every copy sent a gradient back to
// > the same element of b, so b's gradient is the sum of those gradients over the
// > dimension that was repeated.
//
// And the mirror image: a reduction (sum, mean) takes many elements to one, so
// its backward *repeats* (broadcasts) the gradient back over what was reduced.

// %%
#include <iostream>

#include "check/listing.h"
#include "notebooks/notebook.h"
#include "ops/ops.h"

using ag::Tape;
using ag::Var;

// %% [markdown]
// ## Adding a row to every row
//
// x is 3x4, b is 1x4, $y = x + b$ is 3x4. We take the loss $L = \sum w \odot y$ with fixed
// weights w, so that $\partial L/\partial y = w$: every element of y gets a different gradient and
// we can see where each one goes.

// %%
const arma::mat x = {{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10, 11, 12}};
const arma::mat b = {{0.1, 0.2, 0.3, 0.4}};
const arma::mat w = {{1, 0, -1, 2}, {0.5, 1, 0, -1}, {2, 3, 1, 0}};

NB_CELL {
  Tape tape;
  Var vx = tape.leaf(x, "x");
  Var vb = tape.leaf(b, "b");
  Var y = vx + vb;
  Var loss = ag::sum(ag::mul(tape.constant(w, "w"), y));
  tape.backward(loss);
  nb::show("y = x + b", y.value());
  nb::show("dL/dy = w", w);
  nb::show("dL/dx (same shape as x: each x element was used once)", vx.grad());
  nb::show("dL/db (each b element was used by all 3 rows)", vb.grad());
  nb::show("sum of w down each column", arma::sum(w, 0));
  nb::check_close("dL/db equals the column sums of dL/dy", vb.grad(), arma::mat(arma::sum(w, 0)), 1e-15);
  nb::check_close("dL/dx equals dL/dy", vx.grad(), w, 1e-15);
}

// %% [markdown]
// b(0, 2) = 0.3 was added to y(0, 2), y(1, 2) and y(2, 2), whose gradients are
// -1, 0 and 1, so its gradient is -1 + 0 + 1 = 0. The forward repeated b down
// the rows; the backward sums down the rows.
//
// ## A column, and a scalar
//
// The same rule holds for a column c (3x1) repeated across the columns, and
// for a scalar s (1x1) repeated everywhere: each one's gradient is the sum of
// the gradients that reach its copies. Here the column *multiplies* x, in
// y = x * c + s, so the copy of c(i) in y(i, j) receives dL/dy(i, j) x(i, j) =
// w(i, j) x(i, j), and dL/dc is the row sums of w * x (not of w: those would
// be [2, 0.5, 6]). The scalar is added, so each copy receives w(i, j) and
// dL/ds is the sum of all of w.

// %%
NB_CELL {
  Tape tape;
  Var vx = tape.leaf(x, "x");
  Var c = tape.leaf(arma::mat{1.0, 2.0, 3.0}.t(), "c");
  Var s = tape.leaf(arma::mat(1, 1, arma::fill::value(10.0)), "s");
  Var loss = ag::sum(ag::mul(tape.constant(w, "w"), vx * c + s));
  tape.backward(loss);
  nb::show("dL/dc", c.grad());
  nb::show("row sums of w * x", arma::sum(w % x, 1));
  nb::show("row sums of w alone (what an added column would get)", arma::sum(w, 1));
  nb::show("dL/ds", s.grad());
  nb::check_close("dL/dc = row sums of w * x", c.grad(), arma::mat(arma::sum(w % x, 1)), 1e-12);
  nb::check_close("dL/ds = sum of all w", s.grad()(0), arma::accu(w), 1e-12);
}

// %% [markdown]
// ## Reductions: the gradient is repeated back
//
// mean(x, dim=1) averages each row into one number (3x1). Every element of a row
// contributed 1/4 of that number, so each receives 1/4 of its row's gradient.
// sum(x, dim=0) adds each column (1x4); each element receives its column's
// gradient unchanged.

// %%
NB_CELL {
  Tape tape;
  Var vx = tape.leaf(x, "x");
  Var row_means = ag::mean(vx, 1);  // 3x1
  const arma::mat dmean = arma::colvec{1.0, -2.0, 4.0};
  tape.backward(row_means, dmean);
  nb::show("mean(x, dim=1)", row_means.value());
  nb::show("dL/dx when dL/dmean = [1; -2; 4]", vx.grad());
  nb::check_close("each row gets its gradient / 4", vx.grad(),
                  arma::mat(arma::repmat(dmean, 1, 4) / 4.0), 1e-15);

  Tape tape2;
  Var vx2 = tape2.leaf(x, "x");
  Var col_sums = ag::sum(vx2, 0);  // 1x4
  tape2.backward(col_sums, arma::mat{{1, 2, 3, 4}});
  nb::show("dL/dx when dL/dsum(dim=0) = [1, 2, 3, 4]", vx2.grad());
  nb::check(arma::all(arma::vectorise(vx2.grad().row(2) == arma::rowvec{1, 2, 3, 4})),
            "every row of dL/dx repeats dL/dsum");
}

// %% [markdown]
// ## The pair, side by side
//
// | forward | backward |
// |---|---|
// | broadcast (repeat b over rows) | sum the gradient over rows |
// | sum over rows | repeat the gradient over rows |
// | mean over a row of D elements | repeat the gradient over the row, divided by D |
//
// A common bug in a handwritten backward is to forget the sum: returning dL/dy
// (NxD) as the gradient of a 1xD bias. The engine refuses it, because every
// gradient must have the shape of its value:

// %%
NB_CELL {
  Tape tape;
  Var vx = tape.leaf(x, "x");
  Var vb = tape.leaf(b, "b");
  // A broken "add" whose backward forgets to sum over the broadcast rows.
  Var y = tape.record("add_without_sum", {vx, vb}, x + arma::repmat(b, 3, 1),
                      [](Tape& t, const ag::Node& n) {
                        t.accumulate(n.inputs[0], n.grad);
                        t.accumulate(n.inputs[1], n.grad);  // wrong: should be sum over rows
                      });
  bool refused = false;
  try {
    tape.backward(y, w);
  } catch (const ag::Error& e) {
    refused = true;
    std::cout << "the engine says: " << e.what() << "\n";
  }
  nb::check(refused, "a 3x4 gradient for a 1x4 input is refused");
}

// %% [markdown]
// The assignment kit (`assignments/`) goes one step further: when a gradient is
// wrong it tells you *how* it is wrong, including "missing the sum over a
// broadcast dimension".

// %% [markdown]
// ## Exercises
//
// 1. (easy) x is 3x4 and b is 1x4; y = x + b. What is dL/db for L = sum(y)? And for
//    L = mean(y)? Check both on a tape.
// 2. (easy) c is 3x1 and y = x + c (c repeated across the 4 columns). For
//    L = sum(w * y), write dL/dc in terms of w, then check it.
// 3. (easy) s is 1x1 and y = s * x (element-wise, s repeated everywhere). Give
//    dL/ds and dL/dx in terms of dL/dy and x.
// 4. (easy) Why does the backward of mean(x, dim=1) divide by the number of
//    **columns** D, not by the number of rows N?
// 5. (medium) For one row, y = x - mean(x) (centring). Show that dx = dy - mean(dy),
//    and that every row of dx sums to zero whatever dy is. (Lesson 04 meets
//    this again inside LayerNorm.)
