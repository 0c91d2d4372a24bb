// %% [markdown]
// # Lesson 04: deriving the fused LayerNorm backward
//
// `layernorm_composed` records eight primitive nodes and lets the tape derive
// the gradient. `layernorm_fused` is one node whose backward is three
// terms. This lesson derives those three terms from the composed graph, checks
// them on numbers, and looks at the Jacobian of one row: a picture, and its
// null space (shifting a row changes nothing, so the gradient cannot see shifts).

// %%
#include <cstdio>
#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include "check/listing.h"
#include "notebooks/notebook.h"
#include "ops/layernorm.h"
#include "ops/ops.h"

using ag::Tape;
using ag::Var;

const double eps = 1e-5;

// %% [markdown]
// ## The composed graph
//
// For one row of D features, the forward is, as the seeds write it,
//
// $$
// \begin{aligned}
// \mu &= \mathrm{mean}(x)
// \\ \mathrm{var} &= \mathrm{mean}((x - \mu)^2) && \text{one var node of } x \text{ itself, biased (divide by } D)
// \\ d &= x - \mu
// \\ \mathrm{std} &= \sqrt{\mathrm{var} + \epsilon}, \quad \mathrm{rstd} = 1 / \mathrm{std}
// \\ \hat{x} &= d / \mathrm{std}
// \\ y &= \gamma \, \hat{x} + \beta
// \end{aligned}
// $$
//
// The tape of the composed version lists exactly these steps, one node each
// (`add_scalar` adds eps, `mul` and `add` apply gamma and beta):

// %%
NB_CELL {
  Tape tape;
  Var x = tape.leaf(arma::mat{{3.0, 1.0, 5.0, 7.0}}, "x");
  Var gamma = tape.leaf(arma::mat{{1.0, 1.0, 1.0, 1.0}}, "gamma");
  Var beta = tape.leaf(arma::mat{{0.0, 0.0, 0.0, 0.0}}, "beta");
  ag::layernorm_composed(x, gamma, beta, eps);
  std::cout << ag::format_tape(tape);
  const std::vector<std::string> seeds = {"mean(dim=1)", "var(dim=1)", "sub", "add_scalar", "sqrt", "div", "mul", "add"};
  std::vector<std::string> recorded;
  for (std::size_t id = 3; id < tape.size(); ++id) recorded.push_back(tape.node(id).op);
  nb::check(recorded == seeds, "after its 3 leaves the composed LayerNorm records the seeds' 8 nodes, in their order");
}

// %% [markdown]
// ## Backward through the graph, by hand
//
// Walk the graph backwards with $dy = \partial L / \partial y$ given (one row, $D$ features).
//
// 1. $y = \gamma \hat{x} + \beta$ gives $d\gamma = \sum_\text{rows} dy \, \hat{x}$,
//    $d\beta = \sum_\text{rows} dy$, and **$d\hat{x} = dy \, \gamma$**.
// 2. $\hat{x} = d \cdot \mathrm{rstd}$. x reaches xhat along three paths: directly through d, through
//    mu (inside d), and through var (inside rstd). Take them one at a time.
//    - Through var: $d\mathrm{var} = \sum_j d\hat{x}_j \, d_j \cdot (-\tfrac{1}{2}) (\mathrm{var} + \epsilon)^{-3/2}$, and
//      the `var` node sends back $d\mathrm{var} \cdot 2 d_j / D$ to each $x_j$ (var depends on
//      x through its own mean too, but that share is a multiple of
//      $\sum_j d_j = 0$).
//    - Through d directly: $d\hat{x} \cdot \mathrm{rstd}$.
//    - Through mu: $d = x - \mu$, so mu receives minus the sum of everything d got;
//      $\mu = \mathrm{mean}(x)$ spreads it back as $1/D$ to each $x_j$.
// 3. Collect and write $d = \hat{x} \cdot \mathrm{std}$. The var path becomes
//    $-\mathrm{rstd} \, \hat{x} \, \mathrm{mean}(d\hat{x} \, \hat{x})$; the mu path becomes $-\mathrm{rstd} \, \mathrm{mean}(d\hat{x})$.
//    The result:
//
// $$
// dx = \mathrm{rstd} \Big( \underbrace{d\hat{x}}_{\text{direct}}
//   - \underbrace{\mathrm{mean}(d\hat{x})}_{\text{through } \mu}
//   - \underbrace{\hat{x} \, \mathrm{mean}(d\hat{x} \, \hat{x})}_{\text{through var}} \Big)
// $$
//
// Three terms, two row means. The fused node captures mean and rstd per row
// (2 numbers a row, not the N x D xhat) and keeps x and gamma, its inputs,
// whose values the tape already holds; the backward recomputes xhat from x,
// mean and rstd. Lesson 08 counts what that saves.

// %%
NB_CELL {
  const arma::mat x = {{3.0, 1.0, 5.0, 7.0}, {0.5, -1.5, 2.0, 0.25}};
  const arma::mat gamma = {{1.5, -0.5, 2.0, 1.0}};
  const arma::mat beta = {{0.1, 0.2, -0.3, 0.0}};
  const arma::mat dy = {{0.3, -1.2, 0.8, 0.5}, {-0.7, 0.4, 1.1, -0.2}};

  // The three terms, in plain Armadillo.
  const arma::vec mu = arma::mean(x, 1);
  const arma::mat d = x.each_col() - mu;
  const arma::vec rstd = 1.0 / arma::sqrt(arma::mean(arma::square(d), 1) + eps);
  const arma::mat xhat = d.each_col() % rstd;
  arma::mat dxhat = dy;
  dxhat.each_row() %= gamma;
  const arma::mat term_direct = dxhat.each_col() % rstd;
  const arma::mat term_mean = arma::repmat(-rstd % arma::mean(dxhat, 1), 1, 4);
  const arma::mat term_var = -(xhat.each_col() % (rstd % arma::mean(dxhat % xhat, 1)));
  const arma::mat dx_formula = term_direct + term_mean + term_var;
  nb::show("term 1, direct: rstd * dxhat", term_direct);
  nb::show("term 2, through the mean: -rstd * mean(dxhat)", term_mean);
  nb::show("term 3, through the variance: -rstd * xhat * mean(dxhat * xhat)", term_var);
  nb::show("dx = sum of the three terms", dx_formula);

  // The tape's answers, composed and fused.
  arma::mat dx_composed, dx_fused, dgamma_composed, dgamma_fused;
  for (int fused = 0; fused < 2; ++fused) {
    Tape tape;
    Var vx = tape.leaf(x, "x");
    Var vg = tape.leaf(gamma, "gamma");
    Var vb = tape.leaf(beta, "beta");
    Var y = fused ? ag::layernorm_fused(vx, vg, vb, eps) : ag::layernorm_composed(vx, vg, vb, eps);
    tape.backward(y, dy);
    (fused ? dx_fused : dx_composed) = vx.grad();
    (fused ? dgamma_fused : dgamma_composed) = vg.grad();
  }
  nb::check_close("dx: three-term formula against the composed tape", dx_formula, dx_composed, 1e-12);
  nb::check_close("dx: fused node against the composed tape", dx_fused, dx_composed, 1e-12);
  nb::check_close("dgamma: sum of dy * xhat against the composed tape", arma::mat(arma::sum(dy % xhat, 0)),
                  dgamma_composed, 1e-12);
  nb::check_close("dgamma: fused against composed", dgamma_fused, dgamma_composed, 1e-12);
  nb::check_close("each row of dx sums to 0", arma::mat(arma::sum(dx_formula, 1)), arma::zeros(2, 1), 1e-12);
}

// %% [markdown]
// Every row of dx sums to zero. That is not a coincidence; the Jacobian explains it.
//
// ## The Jacobian of one row
//
// For one row with $\gamma = 1$, $J_{ij} = \partial y_i / \partial x_j$. From the formula above (apply it
// to dy = each unit vector in turn):
//
// $$
// J = \mathrm{rstd} \left( I - \tfrac{1}{D} \mathbf{1} \mathbf{1}^T - \tfrac{1}{D} \hat{x} \hat{x}^T \right)
// $$
//
// The identity, minus the projection onto the all-ones direction, minus the
// projection onto xhat. We build J column by column from the tape (D backward
// passes, one per unit dy) and compare it with the formula.

// %%
const arma::mat row = {{0.9, -0.4, 2.1, 1.3, -1.6, 0.2}};

// Row i of J is the gradient of y_i: one backward pass with dy = the i-th unit vector.
arma::mat jacobian_from_tape(const arma::mat& x, const arma::mat& gamma) {
  const arma::uword D = x.n_cols;
  arma::mat J(D, D);
  for (arma::uword i = 0; i < D; ++i) {
    Tape tape;
    Var vx = tape.leaf(x, "x");
    Var y = ag::layernorm_composed(vx, tape.leaf(gamma), tape.leaf(arma::zeros(1, D)), eps);
    arma::mat unit(1, D, arma::fill::zeros);
    unit(i) = 1;
    tape.backward(y, unit);  // row i of J: dy_i / dx
    J.row(i) = vx.grad();
  }
  return J;
}

arma::mat jacobian_from_tape(const arma::mat& x) { return jacobian_from_tape(x, arma::ones(1, x.n_cols)); }

// A row's statistics as LayerNorm uses them: biased variance, eps inside the root.
struct RowStats {
  double var, rstd;
  arma::vec xhat;
};

RowStats row_stats(const arma::mat& x) {
  const arma::vec v = arma::vectorise(x);
  const double var = arma::mean(arma::square(v - arma::mean(v)));  // divide by D
  const double rstd = 1.0 / std::sqrt(var + eps);
  return {var, rstd, (v - arma::mean(v)) * rstd};
}

NB_CELL {
  const arma::uword D = row.n_cols;
  const arma::mat J = jacobian_from_tape(row);
  const RowStats s = row_stats(row);
  const arma::mat formula =
      s.rstd * (arma::eye(D, D) - arma::ones(D, D) / double(D) - s.xhat * s.xhat.t() / double(D));
  nb::show("J from the tape", J, 3);
  nb::check_close("J from the tape against the formula", J, formula, 1e-12);
  nb::check_close("J is symmetric (gamma = 1)", J, arma::mat(J.t()), 1e-12);
  nb::heatmap("jacobian", "LayerNorm Jacobian dy_i/dx_j of the row [0.9, -0.4, 2.1, 1.3, -1.6, 0.2]", J,
              "j (input feature)", "i (output feature)");
  std::printf("off-diagonal entries above zero (i < j):\n");
  arma::uword positive = 0;
  bool all_beyond_minus_one = true;
  for (arma::uword i = 0; i < D; ++i) {
    for (arma::uword j = i + 1; j < D; ++j) {
      if (J(i, j) <= 0) continue;
      ++positive;
      all_beyond_minus_one = all_beyond_minus_one && s.xhat(i) * s.xhat(j) < -1;
      std::printf("  J(%llu, %llu) = %.4f, xhat_i xhat_j = %.3f\n", (unsigned long long)i, (unsigned long long)j, J(i, j),
                  s.xhat(i) * s.xhat(j));
    }
  }
  nb::check(all_beyond_minus_one, "every positive off-diagonal entry has xhat_i xhat_j < -1");
  nb::check(positive == 2 && J(2, 4) > 0 && J(3, 4) > 0, "exactly two pairs are positive: (2, 4) and (3, 4)");
}

// %% [markdown]
// The diagonal is positive: raising x_i raises y_i. Off the diagonal,
// $J_{ij} = -\mathrm{rstd} \, (1 + \hat{x}_i \hat{x}_j) / D$. Mostly negative: raising one feature
// raises the mean, which lowers the other outputs. But features far out on
// opposite sides of the mean have xhat_i xhat_j < -1, and the change of the
// standard deviation wins. Here that is two pairs, printed above: 2.1 and -1.6
// (entries (2, 4) and (4, 2)) and 1.3 and -1.6 (entries (3, 4) and (4, 3)).
// Raising x_4 = -1.6 towards the mean shrinks the spread, which stretches y_2
// and y_3 further out. With gamma = 1, each row and each column sums to zero.
//
// ## The null space: shifting a row changes nothing
//
// Add the same constant c to every feature of a row: the mean moves by c, the
// differences x - mean do not move, so y does not move. In the language of the
// Jacobian, **J 1 = 0**: the all-ones direction is in J's null space, exactly,
// for every eps.
//
// Scaling is different. Scale the centred row, x -> mu + s (x - mu): with
// eps = 0, xhat would not change at all; with eps > 0 it changes a little,
// because eps does not scale with the row. Apply J to xhat itself. Since
// xhat is orthogonal to 1 and $\hat{x}^T \hat{x} = D \, \mathrm{var} / (\mathrm{var} + \epsilon)$,
//
// $$
// J \hat{x} = \mathrm{rstd} \left( \hat{x} - 0 - \hat{x} \frac{\mathrm{var}}{\mathrm{var} + \epsilon} \right)
//   = \mathrm{rstd} \, \frac{\epsilon}{\mathrm{var} + \epsilon} \, \hat{x}
// $$
//
// So xhat is an eigenvector with the small but **non-zero** eigenvalue
// rstd eps / (var + eps), and the remaining D - 2 directions (orthogonal to both)
// have eigenvalue rstd. For eps > 0 the rank of J is **D - 1**, not D - 2.
// "Small" is relative to the variance: the eigenvalue is the fraction
// eps / (var + eps) of rstd, and for a row whose variance is only a few hundred
// eps that fraction is a few tenths of a percent of an rstd that is itself
// large. Seed 000's row 4, [0.663, 0.779, 0.648] (lesson 03), has variance
// 0.0034 = 343 eps, rstd 17 and a scale eigenvalue of 0.05: no test that calls
// it "zero" with a tolerance like 1e-5 can pass.

// %%
// Prints J's eigenvalues for one row and checks them against the closed form.
void check_spectrum(const std::string& name, const arma::mat& x) {
  const arma::uword D = x.n_cols;
  const arma::mat J = jacobian_from_tape(x);
  const RowStats s = row_stats(x);
  arma::vec eigenvalues;
  arma::mat eigenvectors;
  arma::eig_sym(eigenvalues, eigenvectors, J);  // ascending
  const double scale_eigenvalue = s.rstd * eps / (s.var + eps);
  std::cout << name << ": var = " << s.var << " (" << s.var / eps << " eps), rstd = " << s.rstd
            << "\n  eigenvalues of J: " << eigenvalues.t() << "  predicted: 0, rstd eps / (var + eps) = "
            << scale_eigenvalue << ", and rstd " << D - 2 << " times;  rank(J) = " << arma::rank(J) << "\n";
  const double tol = 1e-12 * s.rstd;  // J's entries are of size rstd
  nb::check_close(name + ": |J * ones|", arma::norm(J * arma::ones(D)), 0.0, tol);
  nb::check_close(name + ": J xhat = rstd eps / (var + eps) xhat", arma::mat(J * s.xhat),
                  arma::mat(scale_eigenvalue * s.xhat), tol);
  nb::check_close(name + ": smallest eigenvalue is 0", eigenvalues(0), 0.0, tol);
  nb::check_close(name + ": second eigenvalue is rstd eps / (var + eps)", eigenvalues(1), scale_eigenvalue, tol);
  nb::check_close(name + ": the other D - 2 eigenvalues equal rstd", arma::mat(eigenvalues.tail(D - 2)),
                  arma::mat(D - 2, 1, arma::fill::value(s.rstd)), tol);
  nb::check(arma::rank(J) == D - 1, name + ": J has rank D - 1 (eps > 0)");
}

NB_CELL {
  const arma::uword D = row.n_cols;
  Tape tape;
  Var y0 = ag::layernorm_composed(tape.leaf(row), tape.leaf(arma::ones(1, D)), tape.leaf(arma::zeros(1, D)), eps);
  Var y1 = ag::layernorm_composed(tape.leaf(row + 3.7), tape.leaf(arma::ones(1, D)), tape.leaf(arma::zeros(1, D)), eps);
  std::cout << "largest change of y when the row is shifted by 3.7: " << arma::abs(y1.value() - y0.value()).max() << "\n\n";
  nb::check_close("shifting the row leaves y unchanged", y1.value(), y0.value(), 1e-12);

  check_spectrum("the row above", row);
  check_spectrum("seed 000, row 4", arma::mat{{0.663, 0.779, 0.648}});
  const RowStats s4 = row_stats(arma::mat{{0.663, 0.779, 0.648}});
  nb::check(s4.rstd * eps / (s4.var + eps) > 0.04,
            "for seed 000's row 4 the scale eigenvalue is about 0.05: not near zero");
}

// %% [markdown]
// Write $P_1 = \mathbf{1} \mathbf{1}^T / D$ and $P_{\hat{x}}$ for the projections onto the two directions.
// Then $J = \mathrm{rstd} \left( I - P_1 - \frac{\mathrm{var}}{\mathrm{var} + \epsilon} P_{\hat{x}} \right)$: scale by rstd, remove the
// component along 1 completely (term 2), and the component along xhat all but
// a fraction eps / (var + eps) (term 3). That is the three-term formula again,
// read geometrically.
//
// ## Why every row of dx sums to zero, for any gamma
//
// With gamma, y = gamma * xhat + beta, so J_y = diag(gamma) J, where J is the
// Jacobian of xhat above. J_y is no longer symmetric, and its columns no longer
// sum to zero. The row-sum property does not need either. Backward computes
// dx = J_y^T dy, so
//
// $$
// \textstyle\sum_j dx_j = \mathbf{1}^T J_y^T dy = (J_y \mathbf{1})^T dy = (\mathrm{diag}(\gamma) J \mathbf{1})^T dy = 0
// $$
//
// because J 1 = 0: shifting x does not move xhat, whatever gamma does
// afterwards. (Equivalently 1^T J = 0, since J, the Jacobian of xhat, is
// symmetric; J_y need not be.)

// %%
NB_CELL {
  const arma::uword D = row.n_cols;
  const arma::mat gamma = {{1.5, -0.5, 2.0, 1.0, 0.7, -1.2}};
  const arma::mat J = jacobian_from_tape(row);
  const arma::mat Jy = jacobian_from_tape(row, gamma);
  nb::show("J_y from the tape, gamma = [1.5, -0.5, 2, 1, 0.7, -1.2]", Jy, 3);
  nb::show("column sums 1^T J_y", arma::mat(arma::sum(Jy, 0)), 3);
  nb::check_close("J_y = diag(gamma) J", Jy, arma::mat(arma::diagmat(arma::vectorise(gamma)) * J), 1e-12);
  nb::check(arma::abs(Jy - Jy.t()).max() > 0.1, "J_y is not symmetric");
  nb::check(arma::abs(arma::sum(Jy, 0)).max() > 0.1, "the columns of J_y do not sum to zero");
  nb::check_close("J_y 1 = 0 (every row of J_y sums to zero)", arma::mat(Jy * arma::ones(D)), arma::zeros(D, 1), 1e-12);

  Tape tape;
  Var vx = tape.leaf(row, "x");
  Var y = ag::layernorm_fused(vx, tape.leaf(gamma), tape.leaf(arma::zeros(1, D)), eps);
  const arma::mat dy = {{0.3, -1.2, 0.8, 0.5, -0.7, 0.4}};
  tape.backward(y, dy);
  std::cout << "sum of dx for dy = " << dy << "  = " << arma::accu(vx.grad()) << "\n";
  nb::check_close("dx from the fused node = J_y^T dy", vx.grad(), arma::mat(dy * Jy), 1e-12);
  nb::check_close("dx sums to zero with gamma != 1", arma::accu(vx.grad()), 0.0, 1e-12);
}

// %% [markdown]
// ## What to remember
//
// - $dx = \mathrm{rstd} \left( d\hat{x} - \mathrm{mean}(d\hat{x}) - \hat{x} \, \mathrm{mean}(d\hat{x} \, \hat{x}) \right)$, $d\hat{x} = dy \, \gamma$.
// - The terms come from the three paths from x to y: direct, through the mean, through the variance.
// - The Jacobian of xhat for one row has eigenvalues 0 (the all-ones direction),
//   rstd eps / (var + eps) (xhat itself) and rstd (the rest): rank D - 1 for eps > 0.
// - J 1 = 0, so every row of dx sums to zero for any gamma. That is a free test of any
//   LayerNorm backward, yours included (assignments/layernorm).

// %% [markdown]
// ## Exercises
//
// 1. (medium) For a batch of N rows, derive dgamma and dbeta. Why are they sums over
//    the rows, and which lesson's rule is that?
// 2. (medium) With eps = 0, show that dx is orthogonal to xhat as well as to 1. With
//    eps > 0, what is sum_j dx_j xhat_j, in terms of dxhat?
// 3. (medium) Take D = 2 and eps = 0. What is xhat for any row with two different
//    values? What is J? What does that mean for training a model whose
//    LayerNorm has two features?
// 4. (easy) A row has variance exactly eps. What is the eigenvalue of J along xhat, as
//    a fraction of rstd?
// 5. (hard) Write the fused backward for N rows in plain Armadillo (no loops over
//    rows: use `each_col`), and check it against the composed tape with
//    `ag::gradcheck` or with the checks of the second cell.
