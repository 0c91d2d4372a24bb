// %% [markdown]
// # Lesson 00: from PyTorch to this project, in C++
//
// The seeds write LayerNorm in PyTorch. This course writes it in C++, on
// Armadillo matrices, with its own tape instead of PyTorch's autograd. The
// ideas are the same; the spelling is not. This lesson puts the two side by
// side and checks every claim of the table below in a cell.
//
// | PyTorch (the seeds) | this project | note |
// |---|---|---|
// | `x = torch.tensor([[3., 1., 5., 7.]])` | `arma::mat x = {{3, 1, 5, 7}};` | always 2-D, always double |
// | `x.shape` | `x.n_rows`, `x.n_cols` | `(batch, seq, hidden)` is flattened to `(batch*seq, hidden)`: one token per row |
// | `x.mean(dim=-1, keepdim=True)` | `arma::mean(x, 1)` | dim 1 = along each row; the result is a column |
// | `x.var(dim=-1, unbiased=False)` | `arma::var(x, 1, 1)` | Armadillo's second argument 1 divides by N; its default 0 divides by N - 1 |
// | `x * y` (element-wise) | `x % y` | in Armadillo `*` is the matrix product |
// | `x @ w` | `x * w` | |
// | `x - x.mean(-1, keepdim=True)` | `x.each_col() - arma::vec(arma::mean(x, 1))` | broadcasting is spelled out in Armadillo |
// | `torch.tensor(..., requires_grad=True)` | `tape.leaf(x)` | a value on the tape whose gradient we want |
// | `loss.backward()` | `tape.backward(loss)` | |
// | `x.grad` | `vx.grad()` | |
// | `with torch.no_grad():` | `ag::NoGrad no_grad(tape);` | a scope: nothing recorded for backward until it ends |
// | `nn.Module`, `nn.Parameter` | `ag::Module`, `ag::Parameter` | a parameter outlives the tape; `tape.param(p)` puts it on one |
// | `nn.LayerNorm(D)` | `ag::LayerNorm("ln", D, ag::Impl::Fused)` | `Impl::Composed` builds it from primitive ops |
// | `torch.optim.Adam(m.parameters(), lr=1e-3)` | `ag::Adam adam(m.parameters(), ag::AdamOptions{})` | `zero_grad()` and `step()` as in PyTorch |
// | `m.eval()` | `m.eval()` | |
//
// On the tape (lesson 01), the ops of `ops/ops.h` broadcast as PyTorch does
// for 2-D shapes: a 1 x D row, an N x 1 column or a 1 x 1 scalar against
// N x D. Plain Armadillo does not broadcast: `x - m` with m a column is an
// error there, and you write `x.each_col() - m`.

// %%
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <type_traits>

#include "autograd/rng.h"
#include "nn/linear.h"
#include "nn/norm.h"
#include "nn/optim.h"
#include "notebooks/notebook.h"
#include "ops/ops.h"

using ag::Tape;
using ag::Var;

// Seed 003's token: one row of four features.
const arma::mat token = {{3.0, 1.0, 5.0, 7.0}};

// %% [markdown]
// ## Matrices, and how Armadillo stores them
//
// An `arma::mat` is a 2-D array of doubles. Armadillo stores it **column by
// column** (column-major, as Fortran and BLAS do): element (i, j) of an
// N x D matrix sits at offset i + j N. A contiguous PyTorch tensor is
// row-major: (i, j) sits at i D + j. It matters for speed (a loop that walks
// along a row jumps N doubles at every step) and whenever you pass the raw
// memory to other code; `x(i, j)` reads the right element either way.

// %%
NB_CELL {
  const arma::mat x = {{1, 2, 3}, {4, 5, 6}};
  nb::show("x", x, 3);
  std::printf("x.n_rows = %llu, x.n_cols = %llu\n", (unsigned long long)x.n_rows, (unsigned long long)x.n_cols);
  std::printf("memory, in order:");
  for (arma::uword k = 0; k < x.n_elem; ++k) std::printf(" %g", x.memptr()[k]);
  std::printf("\n");
  nb::check(x.memptr()[1] == x(1, 0) && x.memptr()[2] == x(0, 1), "column-major: (1, 0) follows (0, 0), then (0, 1)");
  nb::check(x.memptr()[1 + 2 * x.n_rows] == x(1, 2), "(i, j) sits at offset i + j N");
}

// %% [markdown]
// ## Mean and variance: which N?
//
// The seeds compute LayerNorm's variance with `x.var(dim=-1, keepdim=True,
// unbiased=False)`: the average of the squared deviations, dividing by D.
// `torch.var`'s default (`unbiased=True`) divides by D - 1, and so does
// Armadillo's `arma::var(x)`: its `norm_type` argument is 0 by default
// (divide by N - 1); 1 divides by N. For the row [3, 1, 5, 7] the squared
// deviations from the mean 4 add up to 20: 20 / 4 = 5 is LayerNorm's
// variance, 20 / 3 = 6.667 is not.

// %%
NB_CELL {
  const arma::vec mean = arma::mean(token, 1);
  const arma::vec var_default = arma::var(token, 0, 1), var_biased = arma::var(token, 1, 1);
  std::printf("mean %.4f; arma::var(x, 0, 1) = %.4f (divides by N - 1); arma::var(x, 1, 1) = %.4f (divides by N)\n",
              mean(0), var_default(0), var_biased(0));
  nb::check_close("the default divides the 20 by N - 1 = 3", var_default(0), 20.0 / 3, 1e-14);
  nb::check_close("norm_type 1 divides by N = 4: LayerNorm's variance", var_biased(0), 5.0, 1e-14);
  Tape tape;
  Var v = ag::var(tape.leaf(token), 1);
  nb::check_close("ag::var on the tape is the biased one unless asked (unbiased = false)", v.value()(0), 5.0, 1e-14);
}

// %% [markdown]
// ## `%` and `*`, and broadcasting by hand
//
// In Armadillo `a * b` is the matrix product and `a % b` the element-wise
// one. Outside the tape nothing broadcasts: subtracting each row's mean is
// `x.each_col() - m` (m a column, one value per row), and scaling each column
// by gamma is `x.each_row() % gamma`.

// %%
NB_CELL {
  const arma::mat x = {{3, 1, 5, 7}, {2, 2, 2, 6}};
  const arma::mat gamma = {{2, 2, 2, 2}};
  const arma::mat centred = x.each_col() - arma::vec(arma::mean(x, 1));
  const arma::mat scaled = centred.each_row() % gamma;
  nb::show("x - mean(x, rows)", centred, 3);
  nb::show("... * gamma, column by column", scaled, 3);
  nb::check_close("each row of the centred x sums to 0", arma::mat(arma::sum(centred, 1)), arma::zeros(2, 1), 1e-14);
  const arma::mat w = {{1, 0}, {0, 1}, {1, 1}, {0, 0}};
  nb::check(arma::size(x * w) == arma::size(2, 2) && arma::size(x % x) == arma::size(x),
            "x * w is the matrix product (2x4 times 4x2 is 2x2); x % x is element-wise (2x4)");
}

// %% [markdown]
// ## The `auto` pitfall
//
// Armadillo delays arithmetic: `x * 2.0` is not a matrix but an
// *expression* that remembers x and computes when it is assigned to a
// matrix. `arma::mat y = x * 2.0;` evaluates at once. `auto y = x * 2.0;`
// keeps the expression, with a reference to x inside: if x changes, y's
// value changes with it, and if x was a temporary that has since been
// destroyed, y refers to freed memory (undefined behaviour, no error). This
// project's rule: never `auto` on an Armadillo expression; name the type.

// %%
NB_CELL {
  arma::mat x = {{1, 2}, {3, 4}};
  const arma::mat now = x * 2.0;  // a matrix: computed here
  auto later = x * 2.0;           // an expression: computed when read (the pitfall, shown on purpose)
  x(0, 0) = 100;
  const arma::mat read_later = later;
  nb::check(!std::is_same_v<decltype(later), arma::mat>, "auto gave an expression type, not arma::mat");
  std::printf("x(0, 0) set to 100 after both lines: arma::mat gives %g, auto gives %g\n", now(0, 0), read_later(0, 0));
  nb::check(now(0, 0) == 2 && read_later(0, 0) == 200, "the auto expression read x when it was used, not when written");
}

// %% [markdown]
// ## The seed's LayerNorm on the tape, and `.backward()`
//
// Seed 000's module, line by line: `mean = x.mean(dim=-1, keepdim=True)`,
// `var = x.var(dim=-1, keepdim=True, unbiased=False)`,
// `norm_x = (x - mean) / torch.sqrt(var + eps)`, `scale * norm_x + shift`.
// On the tape each line is one op, and the ops broadcast the N x 1 mean and
// the 1 x D gamma as PyTorch does. `tape.backward(loss)` is
// `loss.backward()`; `grad()` is `.grad`. We check it against the library's
// fused LayerNorm, which computes the same function in one node (lesson 04).

// %%
NB_CELL {
  const arma::mat x = {{3, 1, 5, 7}, {2, 2, 2, 6}};
  const arma::mat weights = {{1, -1, 2, 0.5}, {0, 1, -2, 1}};  // loss = sum(y * weights)
  const double eps = 1e-5;
  Tape tape;
  Var vx = tape.leaf(x, "x"), gamma = tape.leaf(arma::ones(1, 4), "gamma"), beta = tape.leaf(arma::zeros(1, 4), "beta");
  Var mean = ag::mean(vx, 1);                      // N x 1
  Var var = ag::var(vx, 1);                        // N x 1, divides by D
  Var norm_x = (vx - mean) / ag::sqrt(var + eps);  // N x D minus N x 1: broadcast
  Var y = norm_x * gamma + beta;                   // times 1 x D, plus 1 x D: broadcast
  tape.backward(ag::sum(y * tape.constant(weights)));
  nb::show("y", y.value(), 4);
  nb::show("dloss/dgamma", gamma.grad(), 4);

  Tape fused_tape;
  Var fx = fused_tape.leaf(x), fgamma = fused_tape.leaf(arma::ones(1, 4)), fbeta = fused_tape.leaf(arma::zeros(1, 4));
  Var fy = ag::layernorm_fused(fx, fgamma, fbeta, eps);
  fused_tape.backward(ag::sum(fy * fused_tape.constant(weights)));
  nb::check_close("the seed's lines give the fused LayerNorm's output", y.value(), fy.value(), 1e-12);
  nb::check_close("... and its gradient with respect to x", vx.grad(), fx.grad(), 1e-12);
  nb::check_close("dgamma sums norm_x * weights over the rows (gamma was broadcast)", gamma.grad(),
                  arma::mat(arma::sum(norm_x.value() % weights, 0)), 1e-12);
}

// %% [markdown]
// ## `no_grad`
//
// `ag::NoGrad no_grad(tape);` is `with torch.no_grad():` as a C++ scope: while
// the object lives, ops compute their values but save nothing for backward,
// and when it goes out of scope at the closing brace, recording resumes.
// Evaluation code uses it (lesson 06 on).

// %%
NB_CELL {
  Tape tape;
  Var x = tape.leaf(token);
  Var with_grad = ag::square(x) * 3.0;
  const std::size_t saved_with = tape.saved_bytes();
  {
    ag::NoGrad no_grad(tape);
    Var without = ag::square(x) * 3.0;
    nb::check_close("under NoGrad the value is the same", without.value(), with_grad.value(), 0.0);
  }
  std::printf("bytes saved for backward: %zu by the ops outside NoGrad, %zu after the ops inside it\n", saved_with,
              tape.saved_bytes());
  nb::check(saved_with > 0 && tape.saved_bytes() == saved_with, "the ops under NoGrad saved nothing");
  nb::check(tape.grad_enabled(), "recording is back on after the scope");
}

// %% [markdown]
// ## Modules and an optimiser step
//
// A module owns its parameters (`ag::Parameter`, which outlive any tape);
// `forward` records on whatever tape its input lives on. The training step is
// PyTorch's: `zero_grad()`, forward, loss, `backward`, `step()`. Adam's first
// step is easy to predict: with bias correction its moment estimates are the
// gradient g and g^2, so every parameter moves by
// -lr g / (|g| + eps), almost exactly lr against the sign of its gradient.
// (Lesson 06 derives the optimisers and checks them against nn/optim.h, which has them in
// three lines.)

// %%
NB_CELL {
  ag::Rng rng(1);
  ag::Linear fc("fc", 4, 3, rng);
  ag::LayerNorm ln("ln", 3, ag::Impl::Fused);
  std::vector<ag::Parameter*> params = fc.parameters();
  for (ag::Parameter* p : ln.parameters()) params.push_back(p);
  ag::AdamOptions options;
  options.lr = 1e-2;
  ag::Adam adam(params, options);
  std::vector<arma::mat> before;
  for (ag::Parameter* p : params) before.push_back(p->value());

  Tape tape;
  adam.zero_grad();
  Var y = ln(fc(tape.constant(arma::mat{{3, 1, 5, 7}, {2, 2, 2, 6}})));
  tape.backward(ag::sum(y * tape.constant(arma::mat{{1, -1, 2}, {0.5, 0, -2}})));
  adam.step();
  double worst = 0;
  for (std::size_t k = 0; k < params.size(); ++k) {
    const arma::mat& g = params[k]->grad();
    const arma::mat expected = before[k] - options.lr * g / (arma::abs(g) + options.eps);
    worst = std::max(worst, arma::abs(params[k]->value() - expected).max());
  }
  std::printf("%zu parameter matrices; largest difference from -lr g / (|g| + eps): %.2g\n", params.size(), worst);
  nb::check(worst < 1e-15, "Adam's first step is -lr g / (|g| + eps) for every parameter");
}

// %% [markdown]
// ## Building and changing one lesson
//
// From the repository's root, once:
//
//     cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
//
// Then, for one lesson (here 03):
//
//     cmake --build build --target notebook_03_layernorm_by_hand     # compile it
//     build/notebooks/notebook_03_layernorm_by_hand                   # run it: cells, output, checks
//     ctest --test-dir build -R notebook_03                           # run it as a test
//     build/cli/autograd notebook render --only 03_layernorm_by_hand  # its Markdown and HTML, with plots
//
// To change a lesson, edit its `notebooks/NN_name.cpp`, build its target
// again and run it. Every `nb::check` line states a fact about the numbers
// as the lesson has them; change an input and the checks that no longer hold
// fail, naming the fact. That is the point of them: they tell you which
// statement of the prose your change made false.
//
// ## What to remember
//
// - One token per row, one feature per column; Armadillo stores the columns contiguously.
// - `arma::var` divides by N - 1 unless its second argument is 1; LayerNorm divides by N.
// - `%` is element-wise, `*` is the matrix product; plain Armadillo broadcasts with `each_col` and
//   `each_row`, the tape's ops broadcast by themselves.
// - Never `auto` on an Armadillo expression.
// - `tape.leaf`, `tape.backward(loss)`, `grad()`, `ag::NoGrad`, modules, `zero_grad` and `step`
//   are PyTorch's `requires_grad`, `.backward()`, `.grad`, `no_grad`, `nn.Module` and `torch.optim`.

// %% [markdown]
// ## Exercises
//
// 1. (easy) Write seed 003's `x.std(dim=-1)` (PyTorch's default, unbiased)
//    and LayerNorm's biased standard deviation of the row [3, 1, 5, 7] in
//    Armadillo, and give both values.
// 2. (easy) An `arma::mat A(3, 5)`: at which offset of `A.memptr()` is
//    A(2, 1)? At which offset would a contiguous PyTorch tensor of shape
//    (3, 5) keep it? Which element is at offset 1 in each?
// 3. (medium) Write RMSNorm, y = x / sqrt(mean(x^2) + eps) * gamma, on the
//    tape from `ag::mean`, `ag::square` and `ag::sqrt`, and check its output
//    and its gradient against `ag::rmsnorm_fused`.
// 4. (medium) Adam's second step is no longer -lr sign(g). Write it out for
//    one parameter with gradients g1 and g2, and check your formula against
//    `ag::Adam` over two steps of this lesson's model.
