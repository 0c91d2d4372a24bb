// %% [markdown]
// # Lesson 03: LayerNorm by hand
//
// LayerNorm takes each row of a matrix (one token, D features) and
//
// 1. subtracts the row's mean,
// 2. divides by the row's standard deviation, $\sqrt{\mathrm{var} + \epsilon}$,
// 3. scales by gamma and shifts by beta (one value per feature, learned).
//
// $$
// y = \frac{x - \mathrm{mean}}{\sqrt{\mathrm{var} + \epsilon}} \, \gamma + \beta
// $$
//
// The variance is the *biased* one: the average of the squared differences,
// dividing by D (not D - 1). eps = 1e-5 keeps the division safe.
//
// LayerNorm is Ba, Kiros and Hinton's (2016, "Layer Normalization"). They
// took BatchNorm's statistics (Ioffe and Szegedy 2015: each feature over the
// batch) and computed them over the features of each sample instead, so that
// the output of one sample no longer depends on the others in its batch and
// training and inference compute the same thing (lesson 07 measures why that
// matters). Their paper also tabulates what each norm is invariant to; lesson
// 06 measures one row of that table, the invariance to scaling the weights.
//
// We redo the worked examples of three tutorials (the "seeds"), print every
// intermediate, and check each number against the tape: `layernorm_composed`
// builds LayerNorm from primitive ops in the seeds' order (mean, var, sub,
// add_scalar, sqrt, div, mul, add: one node each), and `layernorm_fused`
// computes it in one node. Where a tutorial's printed number is wrong, we
// show the correct math and say so.

// %%
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <limits>
#include <string>

#include "autograd/rng.h"
#include "nn/optim.h"
#include "notebooks/notebook.h"
#include "ops/layernorm.h"
#include "ops/ops.h"

using ag::Tape;
using ag::Var;

// The residual output matrix of seed 000 (Chapter 7.2, "1st Layer Normalization").
const arma::mat residual = {{1.133, -0.299, 0.503},
                            {-0.176, 0.911, 0.143},
                            {0.766, 0.781, -0.518},
                            {1.601, -0.669, 0.368},
                            {0.663, 0.779, 0.648}};
const double eps = 1e-5;

// %% [markdown]
// ## The first row, step by step
//
// Seed 000 walks through the row [1.133, -0.299, 0.503] by hand. We do the same
// with plain arithmetic: no tape, no library, just the formula.

// %%
NB_CELL {
  const arma::rowvec x = residual.row(0);
  const double mean = arma::accu(x) / 3;
  const arma::rowvec diff = x - mean;
  const arma::rowvec squares = arma::square(diff);
  const double variance = arma::accu(squares) / 3;
  const double stdev = std::sqrt(variance + eps);
  const arma::rowvec normalised = diff / stdev;

  std::cout << std::fixed << std::setprecision(4)
            << "mean       = (1.133 - 0.299 + 0.503) / 3 = " << mean << "\n"
            << "x - mean   = [" << diff(0) << ", " << diff(1) << ", " << diff(2) << "]\n"
            << "squares    = [" << squares(0) << ", " << squares(1) << ", " << squares(2) << "]\n"
            << "variance   = sum / 3 = " << variance << "\n"
            << "std        = sqrt(variance + 1e-5) = " << stdev << "\n"
            << "normalised = [" << normalised(0) << ", " << normalised(1) << ", " << normalised(2) << "]\n";
  std::cout.unsetf(std::ios::floatfield);
  nb::check_close("mean (seed: 0.446)", mean, 0.446, 5e-4);
  nb::check_close("variance (seed: 0.343)", variance, 0.343, 5e-4);
  nb::check_close("std (seed: 0.586)", stdev, 0.586, 5e-4);
  nb::check_close("normalised (seed: [1.17, -1.27, 0.10])", arma::mat(normalised),
                  arma::mat{{1.17, -1.27, 0.10}}, 5e-3);
}

// %% [markdown]
// The seed's walk-through is right. With gamma = 1 and beta = 0 (their values
// before training) the output is the normalised row itself. So is the seed's
// code: its `LayerNorm` module computes `x.var(dim=-1, keepdim=True,
// unbiased=False)`, the biased variance, with eps inside the square root,
// exactly the formula above. What goes wrong below is its printed table, not
// its module.
//
// ## Every row, on the tape
//
// `layernorm_composed_steps` records the same steps as tape nodes and hands
// back each intermediate, one per node, for all five rows at once. The tape
// follows the seeds' code rather than their walk-through: the variance is one
// `var` node of x itself (`x.var(dim=-1, unbiased=False)`), so the squared
// differences never appear as a node of their own. Per-row quantities (mean,
// variance, std) are 5x1 columns; the rest are 5x3.

// %%
NB_CELL {
  Tape tape;
  Var x = tape.leaf(residual, "x");
  Var gamma = tape.leaf(arma::ones(1, 3), "gamma");
  Var beta = tape.leaf(arma::zeros(1, 3), "beta");
  const ag::NormSteps steps = ag::layernorm_composed_steps(x, gamma, beta, eps);
  for (const auto& [name, v] : steps.steps) nb::show(name, v.value(), 4);

  // The same numbers by hand, for every row.
  const arma::mat mean = arma::mean(residual, 1);
  const arma::mat diff = residual.each_col() - arma::vec(mean);
  const arma::mat variance = arma::mean(arma::square(diff), 1);
  const arma::mat y = diff.each_col() / arma::sqrt(arma::vec(variance) + eps);
  nb::check(steps.steps.size() == 8 && tape.size() == 3 + 8, "eight steps, one per node after the 3 leaves");
  nb::check_close("tape mean against hand mean", steps.steps[0].second.value(), mean, 1e-15);
  nb::check_close("tape variance against hand variance", steps.steps[1].second.value(), variance, 1e-15);
  nb::check_close("tape y against hand y", steps.y.value(), y, 1e-14);
  Var fused = ag::layernorm_fused(x, gamma, beta, eps);
  nb::check_close("fused y against composed y", fused.value(), steps.y.value(), 1e-12);
}

// %% [markdown]
// ## The seed's final table is wrong
//
// Seed 000 ends with a "complete LayerNorm output" for the five rows. Its first
// row, [1.40, -1.52, 0.12], contradicts its own walk-through ([1.17, -1.27, 0.10]),
// and the other rows disagree with the formula too. Here is the table next to
// the correct one.
//
// There is a check anyone can run without redoing the arithmetic: with gamma = 1
// and beta = 0, **every output row must have mean 0 and (biased) variance
// $\mathrm{var} / (\mathrm{var} + \epsilon)$**, a hair under 1. The table is rounded to two decimals,
// so allow for that: rounding moves each entry by at most h = 0.005, the mean
// by at most h and the variance by at most $2h + h^2 = 0.010$ (the cell's
// comment derives it). The seed's rows have mean 0, but rows 0 and 4 have
// variances of about 1.43 and 0.47, and row 3 has 1.0149: further from 1 than
// rounding can move a LayerNorm output. They cannot be LayerNorm outputs.
//
// The check is necessary, not sufficient. Rows 1 and 2 of the seed's table
// pass it (variances 1.0021 and 0.9941, within rounding) and are still
// wrong. With D = 3, the rows of mean 0 and variance 1 form a whole circle;
// the statistics cannot tell which point of it the row should be.

// %%
NB_CELL {
  const arma::mat seed_table = {{1.40, -1.52, 0.12},
                                {-1.15, 1.29, -0.14},
                                {0.71, 0.70, -1.41},
                                {1.31, -1.14, -0.17},
                                {-0.16, 0.91, -0.75}};
  Tape tape;
  Var y = ag::layernorm_composed(tape.leaf(residual), tape.leaf(arma::ones(1, 3)), tape.leaf(arma::zeros(1, 3)), eps);
  const arma::mat& ours = y.value();
  std::printf("row   seed table              correct (ours)             max |diff|  seed row variance\n");
  for (arma::uword r = 0; r < 5; ++r) {
    const arma::rowvec s = seed_table.row(r);
    const double seed_var = arma::accu(arma::square(s - arma::mean(s))) / 3;
    std::printf("%-5llu [%5.2f, %5.2f, %5.2f]   [%6.3f, %6.3f, %6.3f]   %.3f       %.4f\n", (unsigned long long)r,
                s(0), s(1), s(2), ours(r, 0), ours(r, 1), ours(r, 2), arma::abs(s - ours.row(r)).max(), seed_var);
  }
  const arma::mat row_var = arma::mean(arma::square(ours.each_col() - arma::mean(ours, 1)), 1);
  nb::check_close("every correct row has mean 0", arma::mat(arma::mean(ours, 1)), arma::zeros(5, 1), 1e-12);
  const arma::mat in_var = arma::mean(arma::square(residual.each_col() - arma::mean(residual, 1)), 1);
  nb::check_close("every correct row has variance var / (var + eps)", row_var, arma::mat(in_var / (in_var + eps)), 1e-12);
  // Rounding an entry to 2 decimals moves it by at most h = 0.005: the row's mean by at most h,
  // its biased variance by at most 2h + h^2 (d var = (2/D) sum y_i d_i + ..., and sum |y_i| <= D
  // for a row of mean 0 and variance at most 1). A wider tolerance would pass rows no rounding explains.
  const double h = 0.005, var_tol = 2 * h + h * h;
  for (arma::uword r = 0; r < 5; ++r) {
    const arma::rowvec t = seed_table.row(r);
    const double v = arma::accu(arma::square(t - arma::mean(t))) / 3;
    const bool passes = std::abs(arma::mean(t)) <= h && std::abs(v - in_var(r) / (in_var(r) + eps)) <= var_tol;
    nb::check(passes == (r == 1 || r == 2), "the seed's row " + std::to_string(r) +
                                                (passes ? " passes" : " fails") + " the mean-and-variance test");
  }
  for (arma::uword r = 0; r < 5; ++r) {
    nb::check(arma::abs(seed_table.row(r) - ours.row(r)).max() > 0.015,
              "the seed's row " + std::to_string(r) + " differs from the formula by more than rounding");
  }
}

// %% [markdown]
// Row 4's values are close together: its variance is only 0.0034, and
// dividing by its standard deviation (0.059) stretches differences of about
// 0.1 into the full range [-1.4, 1.4]. That is LayerNorm working as intended,
// not eps: 0.0034 is still 343 times eps. Where eps does show is the output's
// variance, $\mathrm{var} / (\mathrm{var} + \epsilon) = 0.9971$ for row 4, against 0.99997 for row 0.
// eps only takes over when a row's variance comes down to eps itself; a
// constant row (variance 0) would divide by zero without it.

// %%
NB_CELL {
  const arma::rowvec r4 = residual.row(4);
  const double var4 = arma::accu(arma::square(r4 - arma::mean(r4))) / 3;
  Tape tape;
  Var y = ag::layernorm_fused(tape.leaf(arma::mat(r4)), tape.leaf(arma::ones(1, 3)), tape.leaf(arma::zeros(1, 3)), eps);
  const arma::rowvec out = y.value();
  const double out_var = arma::accu(arma::square(out - arma::mean(out))) / 3;
  std::cout << std::setprecision(6) << "row 4: variance " << var4 << " = " << var4 / eps << " eps; output variance "
            << out_var << "\n";
  nb::check(var4 / eps > 300 && var4 / eps < 400, "row 4's variance is a few hundred eps (343)");
  nb::check_close("row 4's output variance = var / (var + eps)", out_var, var4 / (var4 + eps), 1e-12);
  nb::check_close("which is 0.9971", out_var, 0.9971, 5e-5);
}

// %% [markdown]
// ## The row [3, 1, 5, 7], with gamma and beta
//
// Seed 003 works through one token of four features. Mean 4, variance
// (1 + 9 + 1 + 9) / 4 = 5, standard deviation sqrt(5) = 2.2361, normalised
// [-0.4472, -1.3416, 0.4472, 1.3416]. Then gamma = 2 and beta = 1 stretch and shift
// it: 2 * normalised + 1.

// %%
NB_CELL {
  Tape tape;
  Var x = tape.leaf(arma::mat{{3.0, 1.0, 5.0, 7.0}}, "x");
  Var ones = tape.leaf(arma::ones(1, 4), "gamma");
  Var zeros = tape.leaf(arma::zeros(1, 4), "beta");
  Var normalised = ag::layernorm_composed(x, ones, zeros, eps);
  Var scaled = ag::layernorm_composed(x, tape.leaf(arma::mat{{2.0, 2.0, 2.0, 2.0}}, "gamma"),
                                      tape.leaf(arma::ones(1, 4), "beta"), eps);
  nb::show("normalised (gamma 1, beta 0)", normalised.value(), 5);
  nb::show("gamma 2, beta 1", scaled.value(), 5);
  nb::check_close("normalised", normalised.value(), arma::mat{{-0.4472, -1.3416, 0.4472, 1.3416}}, 5e-5);
  nb::check_close("gamma 2, beta 1", scaled.value(), arma::mat{{0.1056, -1.6833, 1.8944, 3.6833}}, 5e-5);
  const double std_out = std::sqrt(arma::accu(arma::square(normalised.value())) / 4);
  std::cout << std::setprecision(7) << "std of the normalised row (biased) = " << std_out
            << "   (seed 003: 0.999999)\n";
  nb::check_close("std of the normalised row = sqrt(5 / (5 + eps))", std_out, std::sqrt(5 / (5 + eps)), 1e-12);
}

// %% [markdown]
// The seed prints [0.106, -1.684, 1.894, 3.684] for gamma 2 and beta 1; the exact
// values are [0.1056, -1.6833, 1.8944, 3.6833]. The seed doubled the *rounded*
// 1.342 (2 x 1.342 = 2.684) instead of 1.34164: a rounding slip, not a
// different formula. Its "normalized std 0.999999" is right, and eps is why:
// the normalised row has variance $\mathrm{var} / (\mathrm{var} + \epsilon) = 5 / 5.00001$, a hair under 1.
//
// ## Why gamma and beta are trained
//
// Seed 002 asks why gamma and beta are trainable. Without them every output
// row of LayerNorm has mean 0 and variance (almost) 1, whatever the layer
// before it does: the normalisation would decide each feature's scale and
// offset for the next layer. With them the network can pick any scale and
// offset per feature, including undoing the normalisation where that helps.
//
// A measurement: targets $t = \mathrm{LN}(x W^*) \, \gamma^* + \beta^*$ with a scale and an
// offset other than 1 and 0, and two models $y = \mathrm{LN}(x W) \, \gamma + \beta$ trained
// on them with Adam, W always trained. In one, gamma and beta are trained too;
// in the other they are frozen at 1 and 0. The frozen model's output rows
// have mean 0 and a standard deviation s_y < 1 for any W, so its squared
// error per element on a target row of mean m and (biased) standard
// deviation s is at least $m^2 + (s - 1)^2$ when $s > 1$: the distance from the
// target to the closest row it can produce. That floor is a fact of the
// geometry, not of the training, so the check below holds on every build.

// %%
struct AffineFit {
  arma::mat gamma, beta;
  double loss = 0;
};

// Fits y = LN(x W) gamma + beta to t by 1500 full-batch Adam steps (lr 1e-2); W starts at
// w0. With `affine` false, gamma and beta stay 1 and 0 (constants on the tape).
AffineFit fit_layernorm(const arma::mat& x, const arma::mat& t, const arma::mat& w0, bool affine) {
  const arma::uword D = t.n_cols;
  ag::Parameter w("W", w0), gamma("gamma", arma::ones(1, D)), beta("beta", arma::zeros(1, D));
  std::vector<ag::Parameter*> trained = {&w};
  if (affine) trained.push_back(&gamma), trained.push_back(&beta);
  ag::AdamOptions options;
  options.lr = 1e-2;
  ag::Adam adam(trained, options);
  AffineFit fit;
  for (int step = 0; step < 1500; ++step) {
    Tape tape;
    Var g = affine ? tape.param(gamma) : tape.constant(gamma.value());
    Var b = affine ? tape.param(beta) : tape.constant(beta.value());
    Var y = ag::layernorm_fused(ag::matmul(tape.constant(x), tape.param(w)), g, b, eps);
    Var loss = ag::sum(ag::square(y - tape.constant(t))) * (1.0 / double(t.n_elem));
    adam.zero_grad();
    tape.backward(loss);
    adam.step();
    fit.loss = loss.item();
  }
  fit.gamma = gamma.value(), fit.beta = beta.value();
  return fit;
}

NB_CELL {
  const arma::uword N = 256, D = 8;
  ag::Rng rng(21);
  const arma::mat x = rng.normal(N, D, 1.0), w_true = rng.normal(D, D, 1.0), w0 = rng.normal(D, D, 1.0);
  const arma::mat gamma_true = {{3.0, 0.5, 2.0, 1.5, 2.5, 1.0, 4.0, 2.0}};
  const arma::mat beta_true = {{1.0, -0.5, 0.0, 2.0, 0.5, -1.0, 1.5, 0.0}};
  Tape tape;
  const arma::mat t = ag::layernorm_fused(tape.constant(arma::mat(x * w_true)), tape.constant(gamma_true),
                                          tape.constant(beta_true), eps).value();
  // The floor for outputs of mean 0 and standard deviation at most 1, row by row.
  const arma::vec m = arma::mean(t, 1), s = arma::sqrt(arma::vec(arma::mean(arma::square(t.each_col() - m), 1)));
  const double floor = arma::mean(arma::square(m) + arma::square(arma::clamp(s - 1, 0.0, arma::datum::inf)));
  const AffineFit trained = fit_layernorm(x, t, w0, true), frozen = fit_layernorm(x, t, w0, false);
  nb::show("gamma*", gamma_true, 3);
  nb::show("gamma learned", trained.gamma, 3);
  nb::show("beta*", beta_true, 3);
  nb::show("beta learned", trained.beta, 3);
  std::printf("mean squared error after 1500 steps: gamma and beta trained %.3g, frozen at 1 and 0 %.4f; "
              "the frozen model's floor %.4f\n", trained.loss, frozen.loss, floor);
  nb::check(frozen.loss >= floor - 1e-9, "frozen gamma and beta: the error cannot go below the floor");
  nb::check(trained.loss < floor / 100, "trained gamma and beta: the error ends below 1% of that floor");
}

// %% [markdown]
// The trained model recovers gamma* and beta* to about two digits and fits
// the targets (an error thousands of times below the floor); the frozen one
// stays above its floor, however long it trains, because no choice of W can
// give its rows another mean or spread. That is the whole reason the two
// vectors exist: normalising fixes the statistics for the optimiser's sake,
// and gamma and beta give the model back the freedom to choose them (Ioffe
// and Szegedy 2015 made the same argument for BatchNorm's; Ba et al. 2016
// kept it for LayerNorm).
//
// ## Biased or unbiased: why seed 003 prints std 1.069044
//
// Seed 003 normalises tokens of 8 features and then reports the output's
// standard deviation as 1.069044, not 1, calling the difference "floating-point
// precision artifacts". It is not: double (or float32) rounding is 1e-16 (6e-8),
// and 0.069 is 7%. Nothing is wrong with its LayerNorm either: it measured the
// spread with `torch.std`, which by default is the **unbiased** estimate,
// dividing by D - 1 = 7 instead of D = 8. LayerNorm made the biased variance
// (almost) 1, so the unbiased one is 8/7 of it:
//
// $$
// \text{unbiased std} = \sqrt{8/7} \times \text{biased std} = 1.0690450 \times 0.9999993 = 1.069044
// $$
//
// (the last factor is $\sqrt{\mathrm{var} / (\mathrm{var} + \epsilon)}$ again.) We build a token with the
// seed's statistics (mean 1.410, unbiased std 2.718) and measure both.

// %%
NB_CELL {
  // Eight features with mean 1.410 and unbiased std 2.718, like the seed's first token.
  arma::rowvec token = {0.3, -1.2, 2.5, 0.9, -0.4, 1.8, 3.1, -2.0};
  token = (token - arma::mean(token)) / arma::stddev(token) * 2.718 + 1.410;  // Armadillo's stddev: N-1
  Tape tape;
  Var y = ag::layernorm_fused(tape.leaf(arma::mat(token)), tape.leaf(arma::ones(1, 8)), tape.leaf(arma::zeros(1, 8)));
  const arma::rowvec out = y.value();
  const double biased = arma::stddev(out, 1);    // norm_type 1: divide by N
  const double unbiased = arma::stddev(out, 0);  // norm_type 0 (default): divide by N - 1, like torch.std
  char printed[32];
  std::snprintf(printed, sizeof printed, "%.6f", unbiased);
  std::cout << std::setprecision(7) << "input:  mean " << arma::mean(token) << ", unbiased std " << arma::stddev(token)
            << "\noutput: mean " << arma::mean(out) << ", biased std " << biased << ", unbiased std " << unbiased
            << "\nunbiased std printed like the seed (6 decimals): " << printed
            << "\nsqrt(8/7) = " << std::sqrt(8.0 / 7.0) << "\n";
  nb::check(std::string(printed) == "1.069044", "the unbiased std of the output prints as 1.069044");
  nb::check_close("unbiased / biased = sqrt(8/7)", unbiased / biased, std::sqrt(8.0 / 7.0), 1e-12);
  nb::check(unbiased - 1 > 1e5 * std::numeric_limits<float>::epsilon(),
            "the 0.069 gap is over 100000 times float32's rounding: not a precision artifact");
}

// %% [markdown]
// The same seed is inconsistent with itself in other places, which is worth
// noticing when reading any tutorial:
//
// - its input statistics ("std: 2.718") come from the same unbiased
//   `torch.std`, while its LayerNorm uses the biased variance: two different
//   definitions of "std" side by side;
// - its hand-worked row [3, 1, 5, 7] reports "Normalized std: 0.999999", the
//   **biased** std (sqrt(5 / 5.00001)); measured like the first example, it
//   would be sqrt(4/3) x 0.999999 = 1.1547;
// - the text says the inputs have "means around 2-3", next to printed means of
//   1.410 and 0.350 (the data is `randn * 3 + 2`: mean 2, std 3 in
//   expectation, and 8 samples per token scatter widely around that).

// %%
NB_CELL {
  const double v = 5.0 / (5.0 + eps);
  std::cout << std::setprecision(7) << "the row [3, 1, 5, 7] normalised: biased std " << std::sqrt(v)
            << ", unbiased std " << std::sqrt(v * 4.0 / 3.0) << "\n";
  nb::check_close("biased std prints as the seed's 0.999999", std::sqrt(v), 0.999999, 5e-7);
  nb::check_close("the unbiased std would be 1.1547", std::sqrt(v * 4.0 / 3.0), 1.1547, 5e-5);
}

// %% [markdown]
// ## Numerics: the variance in floating point
//
// The variance has a tempting one-pass formula, var = E[x^2] - E[x]^2: one sweep
// accumulates the sum and the sum of squares. In exact arithmetic it is right.
// In floating point it subtracts two large, nearly equal numbers, and the
// difference drowns in their rounding. Take the row [10003, 10001, 10005,
// 10007] in float32 (24-bit mantissa, about 7 digits): its squares are about
// 10^8, where float32's spacing is 8, and the variance we want is 5.
//
// The two safe ways: **two passes** (first the mean, then the mean of (x -
// mean)^2), or **shifted sums** (subtract any value near the mean, here the
// row's first element, before squaring; the variance does not change). The
// project's fused kernels use shifted sums in double (`ops/norm_kernels.cpp`).

// %%
NB_CELL {
  const float row[4] = {10003.0f, 10001.0f, 10005.0f, 10007.0f};
  float sum = 0, sum_sq = 0;
  for (float v : row) sum += v, sum_sq += v * v;
  const float mean = sum / 4;
  const float naive = sum_sq / 4 - mean * mean;
  float centred_sq = 0;
  for (float v : row) centred_sq += (v - mean) * (v - mean);
  const float two_pass = centred_sq / 4;
  float shifted_sum = 0, shifted_sq = 0;
  for (float v : row) shifted_sum += v - row[0], shifted_sq += (v - row[0]) * (v - row[0]);
  const float shifted = shifted_sq / 4 - (shifted_sum / 4) * (shifted_sum / 4);
  std::cout << "float32 variance of [10003, 10001, 10005, 10007] (exact: 5)\n  E[x^2] - E[x]^2: " << naive
            << "\n  two passes:      " << two_pass << "\n  shifted sums:    " << shifted << "\n";
  std::cout << "LayerNorm with each variance:\n";
  arma::rowvec with_naive(4), with_two_pass(4);
  for (int j = 0; j < 4; ++j) {
    with_naive(j) = (row[j] - mean) / std::sqrt(std::max(naive, 0.0f) + float(eps));
    with_two_pass(j) = (row[j] - mean) / std::sqrt(two_pass + float(eps));
  }
  nb::show("  naive", arma::mat(with_naive));
  nb::show("  two passes", arma::mat(with_two_pass));
  nb::check(std::abs(naive - 5.0f) >= 2.0f, "float32: E[x^2] - E[x]^2 is off by 40% or more");
  nb::check(two_pass == 5.0f && shifted == 5.0f, "float32: two passes and shifted sums give exactly 5");
  nb::check(arma::abs(with_naive - with_two_pass).max() > 0.1, "the naive variance makes LayerNorm's output wrong");

  // The same trap in double, one level up: at 1e8 the squares are 1e16, where doubles are 2 apart.
  const arma::mat big = {{1e8 + 3, 1e8 + 1, 1e8 + 5, 1e8 + 7}};
  const double naive_double = arma::mean(arma::vectorise(arma::square(big))) - std::pow(arma::mean(arma::vectorise(big)), 2);
  Tape tape;
  auto norm = [&](const arma::mat& m) {
    return ag::layernorm_fused(tape.leaf(m), tape.leaf(arma::ones(1, 4)), tape.leaf(arma::zeros(1, 4)), eps).value();
  };
  const arma::mat fused_big = norm(big), fused_small = norm(arma::mat{{3.0, 1.0, 5.0, 7.0}});
  std::cout << "double, row 1e8 + [3, 1, 5, 7]: E[x^2] - E[x]^2 = " << naive_double
            << "; the fused LayerNorm's output differs from that of [3, 1, 5, 7] by "
            << arma::abs(fused_big - fused_small).max() << "\n";
  nb::check(std::abs(naive_double - 5) >= 0.5, "double at 1e8: E[x^2] - E[x]^2 is off by 10% or more");
  nb::check_close("the fused kernel's shifted sums are exact here", fused_big, fused_small, 1e-12);

  // eps in low precision: next to a large variance it is below the rounding and vanishes.
  const float large_var = 1000.0f;
  nb::check(large_var + float(eps) == large_var, "float32: 1000 + 1e-5 == 1000 (eps only acts on small variances)");
}

// %% [markdown]
// Two lessons. The formula on the page is not the algorithm in the kernel:
// LayerNorm written as E[x^2] - E[x]^2 is correct mathematics and wrong
// numerics. And low precision moves the trap closer: float32 fails at offsets
// of 10^4, float16 (spacing 8 already at 10^4, an 11-bit mantissa) long before;
// mixed-precision training keeps LayerNorm's statistics in float32 for that
// reason (Micikevicius et al. 2018 keep reductions in float32; PyTorch's
// autocast lists `layer_norm` among the ops it runs in float32). eps, too, lives at a precision: next to a variance of 1000 in
// float32 it is below the rounding and adds nothing, which is harmless, since
// eps only matters when the variance is small.
//
// ## What to remember
//
// - LayerNorm works row by row: mean, differences, biased variance (divide by D),
//   eps inside the square root, divide, then gamma and beta.
// - With gamma = 1 and beta = 0 every output row has mean 0 and variance
//   $\mathrm{var} / (\mathrm{var} + \epsilon)$, just under 1: a quick test of any table that claims to be a
//   LayerNorm output. Necessary, not sufficient: wrong rows can pass it. Allow for
//   the table's rounding, no more: 2h + h^2 on the variance for entries rounded to h.
// - gamma and beta are trained because the normalisation fixes each row's mean and
//   spread: with them frozen a model cannot produce another scale or offset, whatever
//   the layers before it learn.
// - Armadillo's `var`/`stddev` and PyTorch's `torch.std` divide by D - 1 by
//   default; LayerNorm divides by D. Mixing the two gives sqrt(D / (D - 1)).
// - The composed tape and the fused node give the same numbers to 1e-12;
//   lesson 04 shows that their gradients agree too, and where the fused formula
//   comes from.
// - Never compute a variance as E[x^2] - E[x]^2 in floating point: use two passes
//   or shifted sums.

// %% [markdown]
// ## Exercises
//
// 1. (easy) Normalise the row [2, 4, 6] by hand with eps = 0: mean, biased variance,
//    std, output. Then give the output's variance with eps = 1e-5.
// 2. (easy) What does LayerNorm output for a constant row [c, c, c], with eps = 1e-5
//    and with eps = 0? What does that say about why eps is there?
// 3. (medium) Take the correct output of seed 000's row 4 (the table above) and write
//    down a different row that has the same mean and the same variance. Why can
//    no test on mean and variance alone catch it?
// 4. (easy) A tutorial prints `torch.std` of a LayerNorm output with D = 768. What
//    number should it print (to 6 decimals), and why is it not 1?
// 5. (hard) **Hard mode.** Implement LayerNorm from this statement alone, without
//    looking at the formula above: *each row of x is shifted and scaled so that
//    its features have mean zero and unit (biased) variance, with a small eps
//    added to the variance for safety; then each feature j is multiplied by a
//    learned gamma_j and shifted by a learned beta_j.* Check your version
//    against `layernorm_fused` on seed 000's matrix to 1e-12.
