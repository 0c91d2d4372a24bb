// %% [markdown]
// # Lesson 07: LayerNorm, RMSNorm and BatchNorm side by side
//
// Three normalisations, one matrix. Rows are samples (tokens), columns are
// features, as everywhere in this project.
//
// | | normalises | subtracts the mean? | learned parameters |
// |---|---|---|---|
// | LayerNorm | each **row** (over the features of one token) | yes | gamma, beta: 2 x d_model |
// | RMSNorm | each **row** | no, divides by the root mean square | gamma: d_model |
// | BatchNorm | each **column** (over the batch) | yes | gamma, beta: 2 x d_model |
//
// We apply all three with gamma = 1 and beta = 0 and look at what comes out.

// %%
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "autograd/rng.h"
#include "nn/norm.h"
#include "notebooks/notebook.h"
#include "ops/layernorm.h"
#include "ops/ops.h"

using ag::Tape;
using ag::Var;

// 4 tokens x 3 features; the features live on very different scales.
const arma::mat x = {{1.0, 200.0, 0.03}, {2.0, 180.0, 0.01}, {4.0, 260.0, 0.02}, {3.0, 220.0, 0.06}};

struct Outputs {
  arma::mat layer, rms, batch;
};

Outputs normalise_three_ways(const arma::mat& m) {
  Tape tape;
  Var v = tape.constant(m, "x");
  Var g = tape.constant(arma::ones(1, m.n_cols), "gamma");
  Var b = tape.constant(arma::zeros(1, m.n_cols), "beta");
  return {ag::layernorm_fused(v, g, b).value(), ag::rmsnorm_fused(v, g).value(),
          ag::batchnorm_composed(v, g, b).value()};
}

arma::mat row_var(const arma::mat& m) { return arma::var(m, 1, 1); }  // norm_type 1: divide by D
arma::mat col_var(const arma::mat& m) { return arma::var(m, 1, 0); }  // divide by N

// %% [markdown]
// ## What each one produces

// %%
NB_CELL {
  const Outputs out = normalise_three_ways(x);
  nb::show("x", x);
  nb::show("LayerNorm(x)", out.layer);
  nb::show("RMSNorm(x)", out.rms);
  nb::show("BatchNorm(x)", out.batch);
  std::cout << "\nper row    LayerNorm mean/var      RMSNorm mean/mean-square\n";
  for (arma::uword r = 0; r < x.n_rows; ++r) {
    std::printf("row %llu     %7.4f / %6.4f       %7.4f / %6.4f\n", (unsigned long long)r, arma::mean(out.layer.row(r)),
                row_var(out.layer)(r), arma::mean(out.rms.row(r)), arma::mean(arma::square(out.rms.row(r))));
  }
  std::cout << "\nper column BatchNorm mean/var\n";
  for (arma::uword c = 0; c < x.n_cols; ++c) {
    std::printf("column %llu  %7.4f / %6.4f\n", (unsigned long long)c, arma::mean(out.batch.col(c)), col_var(out.batch)(c));
  }
  nb::check_close("LayerNorm: every row has mean 0", arma::mat(arma::mean(out.layer, 1)), arma::zeros(4, 1), 1e-12);
  nb::check_close("LayerNorm: every row has variance 1", row_var(out.layer), arma::ones(4, 1), 1e-4);
  nb::check_close("RMSNorm: every row has mean square 1", arma::mat(arma::mean(arma::square(out.rms), 1)),
                  arma::ones(4, 1), 1e-4);
  nb::check(arma::abs(arma::mean(out.rms, 1)).min() > 0.1, "RMSNorm: no row is centred (all row means > 0.1)");
  nb::check_close("BatchNorm: every column has mean 0", arma::mat(arma::mean(out.batch, 0)), arma::zeros(1, 3), 1e-12);
  const arma::mat v = col_var(x);
  nb::check_close("BatchNorm: every column has variance var / (var + eps)", col_var(out.batch),
                  arma::mat(v / (v + 1e-5)), 1e-9);
}

// %% [markdown]
// LayerNorm and RMSNorm mix the three features of a token: feature 1 (around
// 200) dominates every row, so after normalisation each row looks alike: one large
// positive value and two negative ones (LayerNorm), or one value near sqrt(3) and
// two near 0 (RMSNorm, which keeps everything positive because it never subtracts
// the mean). BatchNorm puts each feature on its own scale: the 0.01-0.06 column
// comes out with the same spread as the 200 column. Normalising adds no
// information; it only stops one feature's size from drowning the others'
// differences in whatever comes next.
//
// One number is not 1: BatchNorm's column 2 has variance 0.97. Its values spread
// by a few hundredths, so its variance is only 3.5e-4, and eps = 1e-5 inside the
// square root is 3% of that: the output variance is $\mathrm{var} / (\mathrm{var} + \epsilon)$. eps is
// "negligible" only next to the variance it protects.
//
// ## One token alone, or in a batch
//
// LayerNorm and RMSNorm look at one row at a time: a token gets the same output
// whatever else is in the batch. BatchNorm's output for a token depends on its
// batch mates. Here BatchNorm uses the batch's own statistics, as it does in
// training (`batchnorm_composed` is that training-mode formula; the module
// `ag::BatchNorm` further down also tracks running statistics and uses them in
// eval mode).

// %%
NB_CELL {
  const Outputs in_batch = normalise_three_ways(x);
  const Outputs with_others = normalise_three_ways(arma::join_cols(x.rows(0, 1), arma::mat{{10.0, 100.0, 0.5}}));
  nb::show("LayerNorm of token 0, batch of 4", arma::mat(in_batch.layer.row(0)));
  nb::show("LayerNorm of token 0, another batch", arma::mat(with_others.layer.row(0)));
  nb::show("BatchNorm of token 0, batch of 4", arma::mat(in_batch.batch.row(0)));
  nb::show("BatchNorm of token 0, another batch", arma::mat(with_others.batch.row(0)));
  nb::check_close("LayerNorm ignores the batch", arma::mat(with_others.layer.row(0)), arma::mat(in_batch.layer.row(0)), 1e-15);
  nb::check_close("RMSNorm ignores the batch", arma::mat(with_others.rms.row(0)), arma::mat(in_batch.rms.row(0)), 1e-15);
  nb::check(arma::abs(with_others.batch.row(0) - in_batch.batch.row(0)).max() > 0.1,
            "BatchNorm's output for the same token changes with the batch");
}

// %% [markdown]
// ## "Reduces internal covariate shift": what is known
//
// Seed 002 lists "Reduces Internal Covariate Shift" among the reasons
// normalisation matters. That is the motivation BatchNorm was introduced with
// (Ioffe and Szegedy, 2015): the distribution of a layer's inputs shifts as the
// layers below it train, and normalising it was meant to stop that. It is not
// what the evidence supports. Santurkar, Tsipras, Ilyas and Madry (2018, "How
// Does Batch Normalization Help Optimization?") tested it two ways:
//
// - They added random noise with a changing mean and variance *after* every
//   BatchNorm layer, so each layer's inputs shifted more than without any
//   normalisation. The network still trained about as well as with plain
//   BatchNorm, and better than without it.
// - They measured internal covariate shift directly, as how much a layer's
//   gradient changes when the layers before it take their update, and found
//   that BatchNorm does not reduce it; in some networks it increases it.
//
// What they found instead is that BatchNorm makes the loss smoother: the loss
// and its gradient change less over a step (smaller Lipschitz constants), so a
// larger learning rate stays stable. For LayerNorm in Transformers the measured
// story is about gradients, not input distributions: lesson 10 measures what
// its placement does to them. The seed's other items ("enables higher learning
// rates", "improves gradient flow") are the part that holds up.

// %% [markdown]
// ## Why Transformers do not use BatchNorm
//
// "Batches of one at inference" is not the reason: at inference BatchNorm
// does not use the batch at all, it uses the running mean and variance it
// tracked in training. Three reasons are measured here (the next cell measures the
// second and the third, and the section after it the first, with a BatchNorm
// module that keeps running statistics). They are not the whole story: Shen
// et al. (2020, "PowerNorm: Rethinking Batch Normalization in Transformers")
// studied BatchNorm in Transformers for language and traced its failure to
// large fluctuations of the batch statistics, and of their gradients, from
// batch to batch of text, which is reason 1 at work during training as well:
//
// 1. **Train/inference mismatch.** Training normalises with the batch's
//    statistics, inference with running averages. When batch statistics are
//    noisy (small batches, or data whose statistics drift, as activations do
//    while the model trains) the two disagree, and the model is evaluated on
//    a function it never trained on.
// 2. **Small and variable batches, and padding.** Sequences of different
//    lengths are padded to a common length; padded positions enter BatchNorm's
//    statistics unless every kernel masks them. And with few samples per batch
//    the statistics are noise: with a batch of 2, every column whose spread
//    is well above eps becomes [-1, +1], whatever the values were.
// 3. **Information leaks across positions.** In a causal language model the
//    output at position t must not depend on later tokens. If the tokens of a
//    sequence share a BatchNorm, token t's output depends, through the mean and
//    variance, on every later token, so the model can see the future in
//    training and cannot at generation time.
//
// LayerNorm and RMSNorm have none of these problems: each token is normalised
// by its own statistics, in training and at inference alike.

// %%
NB_CELL {
  // 2. A batch of two: a column becomes -1, +1, up to eps (column 2's variance, 2.5e-5, is not far above eps).
  const arma::mat two = {{1.0, 200.0, 0.03}, {4.0, 260.0, 0.02}};
  const Outputs pair = normalise_three_ways(two);
  nb::show("BatchNorm of a batch of two tokens", pair.batch, 6);
  nb::check_close("batch of 2: BatchNorm outputs +-1 in columns 0 and 1, whatever the values",
                  arma::mat(arma::abs(pair.batch.cols(0, 1))), arma::ones(2, 2), 1e-5);

  // 2. Padding: two rows of zeros added to the batch change the real tokens' outputs.
  const Outputs padded = normalise_three_ways(arma::join_cols(x, arma::zeros(2, 3)));
  const double padding_change = arma::abs(padded.batch.rows(0, 3) - normalise_three_ways(x).batch).max();
  std::cout << "largest change of the real tokens' BatchNorm output when 2 zero rows of padding join: "
            << padding_change << "\n";
  nb::check(padding_change > 0.1, "padding changes BatchNorm's output for the real tokens");
  nb::check_close("padding does not change LayerNorm's output for them", arma::mat(padded.layer.rows(0, 3)),
                  normalise_three_ways(x).layer, 1e-15);

  // 3. Causality: change only the last token of the sequence; look at the first.
  arma::mat future = x;
  future.row(3) = arma::rowvec{30.0, 50.0, 0.9};
  const Outputs now = normalise_three_ways(x), later = normalise_three_ways(future);
  const double leak = arma::abs(later.batch.row(0) - now.batch.row(0)).max();
  std::cout << "change of token 0's BatchNorm output when only token 3 changes: " << leak << "\n";
  nb::check(leak > 0.1, "with BatchNorm over positions, token 0's output depends on token 3 (the future)");
  nb::check_close("with LayerNorm it does not", arma::mat(later.layer.row(0)), arma::mat(now.layer.row(0)), 1e-15);
}

// %% [markdown]
// ## BatchNorm with running statistics
//
// `ag::BatchNorm` (nn/norm.h) is BatchNorm as PyTorch's `BatchNorm1d` defines it.
// In **training mode** (a module's default) it normalises each column with the
// batch's mean and *biased* variance (`batchnorm_composed`), and then updates
//
// $$
// \begin{aligned}
// \text{running\_mean} &= 0.9 \, \text{running\_mean} + 0.1 \, \text{batch mean}
// \\ \text{running\_var} &= 0.9 \, \text{running\_var} + 0.1 \, \text{batch variance, UNBIASED (divide by } N - 1)
// \end{aligned}
// $$
//
// (momentum 0.1; they start at 0 and 1). After `eval()` it normalises with
// `running_mean` and `running_var` as constants on the tape: no gradient flows
// into them, and a sample's output no longer depends on its batch mates. They
// are statistics, not parameters: `parameters()` lists gamma and beta only.

// %%
NB_CELL {
  ag::BatchNorm bn("bn", 3);
  Tape tape;
  bn(tape.constant(x));
  nb::show("running_mean after one batch (the lesson's x)", bn.running_mean);
  nb::show("running_var after one batch", bn.running_var);
  nb::check_close("running_mean = 0.9 * 0 + 0.1 * batch mean", bn.running_mean, arma::mat(0.1 * arma::mean(x, 0)),
                  1e-12);
  nb::check_close("running_var = 0.9 * 1 + 0.1 * the UNBIASED batch variance", bn.running_var,
                  arma::mat(0.9 + 0.1 * arma::var(x, 0, 0)), 1e-12);  // arma::var norm_type 0: divide by N - 1
  std::string message;
  try {
    bn(tape.constant(arma::mat(x.row(0))));
  } catch (const ag::Error& e) {
    message = e.what();
  }
  std::cout << "\na batch of one in training mode:\n  " << message << "\n\n";
  nb::check(message.find("BatchNorm 'bn'") != std::string::npos, "a batch of one in training mode is an error naming the module");
  bn.eval();
  const arma::mat one = bn(tape.constant(arma::mat(x.row(0)))).value();
  nb::check_close("in eval mode a batch of one is fine: (x - running_mean) / sqrt(running_var + eps)", one,
                  arma::mat((x.row(0) - bn.running_mean) / arma::sqrt(bn.running_var + 1e-5)), 1e-12);
}

// %% [markdown]
// ### The train/inference mismatch, measured
//
// Take a stream of samples whose three features have the scales of the
// lesson's x: means (2.5, 215, 0.03), standard deviations (1.2, 30, 0.02). We
// train a BatchNorm (gamma = 1, beta = 0, nothing else learns) on batches of
// 64 and, after every batch, normalise one fixed probe batch of 64 twice: as
// training would (its own statistics) and as inference would (the running
// statistics). The plot shows the root mean square of the difference.

// %%
const arma::rowvec population_mean = {2.5, 215.0, 0.03}, population_sd = {1.2, 30.0, 0.02};

arma::mat draw_batch(ag::Rng& rng, arma::uword n) {
  arma::mat m = rng.normal(n, 3, 1.0);
  m.each_row() %= population_sd;
  m.each_row() += population_mean;
  return m;
}

double rms(const arma::mat& m) { return std::sqrt(arma::mean(arma::vectorise(arma::square(m)))); }

// The same batch normalised as in training (its own statistics) and as at inference (bn's running ones).
double train_eval_gap(ag::BatchNorm& bn, const arma::mat& batch) {
  Tape tape;
  const arma::mat in_training = ag::batchnorm_composed(tape.constant(batch), tape.constant(arma::ones(1, 3)),
                                                       tape.constant(arma::zeros(1, 3))).value();
  bn.eval();
  const arma::mat at_inference = bn(tape.constant(batch)).value();
  bn.train();
  return rms(in_training - at_inference);
}

NB_CELL {
  ag::Rng rng(7);
  const arma::mat probe = draw_batch(rng, 64);
  ag::BatchNorm bn("bn", 3);
  std::vector<double> steps, gaps;
  for (int step = 0; step <= 150; ++step) {
    if (step > 0) {
      Tape tape;
      bn(tape.constant(draw_batch(rng, 64)));
    }
    steps.push_back(step);
    gaps.push_back(train_eval_gap(bn, probe));
  }
  std::printf("rms(train-mode output - eval-mode output) on the probe batch:\n");
  for (int step : {0, 1, 5, 10, 20, 50, 100, 150}) std::printf("  after %3d batches: %10.4f\n", step, gaps[step]);
  nb::Plot plot{"warmup_gap", "Same batch, train mode vs eval mode, while BatchNorm trains on batches of 64",
                "batches seen", "rms difference of the outputs", false, true, {}, {"unset key"}};
  plot.add("gap", steps, gaps, "linespoints pt 7 ps 0.4");
  nb::draw(plot);
  // What no running average can remove: the probe's own statistics are not the population's.
  arma::mat by_population = probe.each_row() - population_mean;
  by_population.each_row() /= arma::sqrt(arma::square(population_sd) + 1e-5);
  Tape tape;
  const double floor = rms(ag::batchnorm_composed(tape.constant(probe), tape.constant(arma::ones(1, 3)),
                                                  tape.constant(arma::zeros(1, 3))).value() - by_population);
  std::printf("the probe's own sampling noise, rms(own statistics - population statistics): %.4f\n", floor);
  nb::check(gaps[5] > 10 * floor, "after 5 batches the modes disagree by over 10x the sampling noise (running mean at 41%)");
  nb::check(gaps[150] < 2 * floor, "after 150 batches of 64 the gap is within 2x the probe's own sampling noise");
  // The typical batch: 50 fresh ones through the trained bn, against the sampling noise of a mean
  // (variance 1/N, in units of the population's sd) and of a standard deviation (about 1/(2N)).
  double sum_sq = 0;
  for (int k = 0; k < 50; ++k) sum_sq += std::pow(train_eval_gap(bn, draw_batch(rng, 64)), 2);
  const double typical = std::sqrt(sum_sq / 50), expected = std::sqrt(1.0 / 64 + 1.0 / (2 * 64));
  std::printf("50 fresh batches of 64: rms gap %.4f; sqrt(1/N + 1/2N) = %.4f\n", typical, expected);
  const arma::rowvec mean_error = (arma::mean(probe, 0) - population_mean) / population_sd * std::sqrt(64.0);
  const arma::rowvec sd_ratio = arma::stddev(probe, 1, 0) / population_sd;  // biased, as BatchNorm's statistics
  std::printf("the probe, per feature: (batch mean - population mean) / (sd / sqrt(N)) = %.2f %.2f %.2f; "
              "batch sd / population sd = %.3f %.3f %.3f\n",
              mean_error(0), mean_error(1), mean_error(2), sd_ratio(0), sd_ratio(1), sd_ratio(2));
  nb::check(std::abs(typical - expected) < 0.03, "a fresh batch's gap is within 0.03 of sqrt(1/N + 1/2N)");
  nb::check(floor > 1.5 * typical, "the probe is an unusual batch: its floor is over 1.5x the typical gap");
}

// %% [markdown]
// At the start the running statistics are PyTorch's initial 0 and 1, so eval
// mode passes feature 1 (around 215) through almost unchanged. Momentum 0.1
// forgets that start as 0.9^k: after 5 batches the running mean still holds
// only $1 - 0.9^5 = 41\%$ of the true mean, after 44 batches 99%. A model that is
// evaluated early in training, or fine-tuned for a few steps on data with other
// statistics, is evaluated with statistics its training never used. After
// the warm-up the gap levels off at the probe's own sampling noise: its mean
// and variance are not the population's, and no running average can fix that.
// For a typical batch of N the normalised values are off by the error of the
// batch mean (variance 1/N in units of the population's standard deviation)
// and of its standard deviation (about 1/(2N)), so the gap is about
// $\sqrt{1/N + 1/2N} = 0.15$ for $N = 64$; 50 fresh batches, printed above, agree.
// The probe's 0.3 is twice that because the probe is an unusual batch: its
// feature 1 has a standard deviation 1.34 times the population's (about 4
// times the $1/\sqrt{2N} = 0.09$ a batch's ratio usually strays), and feature 2's
// mean is 2.8 standard errors off. One batch's floor is not the typical case,
// and neither goes away with more training.
//
// ### Small batches: noisy running estimates, and a different function
//
// Now two BatchNorms see the same stream, one in batches of 2, one in batches
// of 64, for 400 batches each. We follow running_var / true variance for
// feature 1, and beside the batch-of-2 module what the running variance would
// be had it tracked the biased batch variance (divide by N) instead of the
// unbiased one.

// %%
NB_CELL {
  ag::Rng rng(11);
  ag::BatchNorm bn2("bn2", 3), bn64("bn64", 3);
  const double true_var = population_sd(1) * population_sd(1);
  double biased_running = 1.0;  // what bn2 would hold with the biased variance
  std::vector<double> steps, ratio2, ratio64, ratio2_biased;
  for (int step = 1; step <= 400; ++step) {
    const arma::mat small = draw_batch(rng, 2), large = draw_batch(rng, 64);
    Tape tape;
    bn2(tape.constant(small));
    bn64(tape.constant(large));
    biased_running = 0.9 * biased_running + 0.1 * arma::var(small.col(1), 1);  // norm_type 1: divide by N
    steps.push_back(step);
    ratio2.push_back(bn2.running_var(1) / true_var);
    ratio64.push_back(bn64.running_var(1) / true_var);
    ratio2_biased.push_back(biased_running / true_var);
  }
  nb::Plot plot{"batch_size", "Feature 1: running variance / true variance, momentum 0.1", "batches seen",
                "running variance / true variance", false, false, {}, {"set key inside top left", "set yrange [0:3]"}};
  plot.add("batch 2", steps, ratio2);
  plot.add("batch 64", steps, ratio64);
  plot.add("batch 2, had it tracked the biased variance", steps, ratio2_biased);
  nb::draw(plot);
  // After 100 batches the start (var = 1) weighs 0.9^100 = 3e-5: summarise batches 101..400.
  const arma::vec r2 = arma::vec(ratio2).tail(300), r64 = arma::vec(ratio64).tail(300),
                  r2b = arma::vec(ratio2_biased).tail(300);
  std::printf("batches 101-400, running_var / true variance:   mean     sd\n");
  std::printf("  batch 64                                   %6.3f  %6.3f\n", arma::mean(r64), arma::stddev(r64));
  std::printf("  batch 2                                    %6.3f  %6.3f\n", arma::mean(r2), arma::stddev(r2));
  std::printf("  batch 2, biased tracking                   %6.3f  %6.3f\n", arma::mean(r2b), arma::stddev(r2b));
  nb::check(arma::stddev(r2) > 4 * arma::stddev(r64), "with batches of 2 the running variance is over 4x noisier than with 64");
  nb::check(std::abs(arma::mean(r2) - 1) < 0.2, "tracking the unbiased variance, batch 2 is right on average (within 20%)");
  nb::check(std::abs(arma::mean(r2b) - 0.5) < 0.15, "tracking the biased one would converge to half the variance ((N-1)/N)");

  // The function trained on vs the function deployed, on fresh batches of each size.
  double gap2 = 0, gap64 = 0;
  for (int k = 0; k < 50; ++k) {
    gap2 += train_eval_gap(bn2, draw_batch(rng, 2)) / 50;
    gap64 += train_eval_gap(bn64, draw_batch(rng, 64)) / 50;
  }
  std::printf("\nrms(train-mode - eval-mode output), mean over 50 fresh batches: batch 2 %.3f, batch 64 %.3f\n", gap2,
              gap64);
  nb::check(gap2 > 3 * gap64, "the train/eval gap is over 3x larger with batches of 2 than with 64");

  // LayerNorm has no mode and no batch: the same token, the same output.
  ag::LayerNorm ln("ln", 3, ag::Impl::Fused);
  const arma::mat batch = draw_batch(rng, 64);
  Tape tape;
  const arma::mat in_training = ln(tape.constant(batch)).value();
  ln.eval();
  const arma::mat at_inference = ln(tape.constant(batch)).value();
  const arma::mat in_pair = ln(tape.constant(arma::mat(batch.rows(0, 1)))).value();
  nb::check_close("LayerNorm: train mode and eval mode give the same output", at_inference, in_training, 0.0);
  nb::check_close("LayerNorm: a token gets the same output in a batch of 2 as in a batch of 64", in_pair,
                  arma::mat(in_training.rows(0, 1)), 0.0);
}

// %% [markdown]
// The running variance is an exponential average of about 1 / momentum = 10
// batch variances, and a variance estimated from 2 samples is itself very
// noisy (relative standard deviation $\sqrt{2 / (N - 1)}$: 141% for $N = 2$, 18%
// for N = 64), so the batch-of-2 estimate wanders around the truth. It is
// right *on average* only because PyTorch feeds it the unbiased variance: the
// biased one averages (N - 1) / N of the truth, half for N = 2. And with a
// batch of 2 training normalises every column to -1, +1 (the cell at the top),
// while inference produces roughly normal values: the model trains on one
// function and is deployed with another. LayerNorm's output for a token is
// the same in any batch, in either mode.
//
// ## RMSNorm: what dropping the mean does
//
// Zhang and Sennrich (2019) proposed RMSNorm on the hypothesis that of
// LayerNorm's two invariances, to re-scaling and to re-centring, only the
// first matters for training; dropping the second saves the mean (one
// reduction per row and its subtraction) and beta. The two invariances, on
// seed 000's matrix: LayerNorm ignores a shift of a row, RMSNorm does not;
// both ignore a rescaling, up to eps.

// %%
// The residual output matrix of seed 000 (lesson 03): D = 3 features per row.
const arma::mat seed000 = {{1.133, -0.299, 0.503},
                           {-0.176, 0.911, 0.143},
                           {0.766, 0.781, -0.518},
                           {1.601, -0.669, 0.368},
                           {0.663, 0.779, 0.648}};
const double eps = 1e-5;

arma::mat layer_norm(const arma::mat& m) {
  Tape tape;
  return ag::layernorm_fused(tape.constant(m), tape.constant(arma::ones(1, m.n_cols)),
                             tape.constant(arma::zeros(1, m.n_cols)), eps).value();
}
arma::mat rms_norm(const arma::mat& m) {
  Tape tape;
  return ag::rmsnorm_fused(tape.constant(m), tape.constant(arma::ones(1, m.n_cols)), eps).value();
}

NB_CELL {
  const arma::mat shifted = seed000 + 0.5, scaled = 3.0 * seed000;
  const double ln_shift = arma::abs(layer_norm(shifted) - layer_norm(seed000)).max();
  const double rms_shift = arma::abs(rms_norm(shifted) - rms_norm(seed000)).max();
  const double ln_scale = arma::abs(layer_norm(scaled) - layer_norm(seed000)).max();
  const double rms_scale = arma::abs(rms_norm(scaled) - rms_norm(seed000)).max();
  std::printf("largest change of the output       LayerNorm    RMSNorm\n");
  std::printf("  every row shifted by 0.5        %10.2e %10.2e\n", ln_shift, rms_shift);
  std::printf("  every row scaled by 3           %10.2e %10.2e\n", ln_scale, rms_scale);
  nb::check(ln_shift < 1e-12, "LayerNorm ignores a shift of the row");
  nb::check(rms_shift > 0.1, "RMSNorm does not");
  nb::check(ln_scale < 1e-2 && rms_scale < 1e-4, "both ignore a rescaling, up to eps (LayerNorm's row 4 has var = 343 eps)");
}

// %% [markdown]
// ### LayerNorm is RMSNorm of the centred row
//
// Let $d = x - \mathrm{mean}(x)$. Then $\mathrm{mean}(d^2)$ is the biased variance of x, so
// $\mathrm{RMSNorm}(d) = d / \sqrt{\mathrm{var} + \epsilon} = \mathrm{LayerNorm}(x)$ with $\beta = 0$, the same gamma
// and the same eps. RMSNorm is LayerNorm with the centring step left out, and
// nothing else changed.

// %%
NB_CELL {
  ag::Rng rng(3);
  // Rounding only: the two kernels add the row's terms in different orders, so the
  // tolerance grows with D (a few ulps of the outputs for D = 3, a few dozen for D = 768).
  const std::vector<std::pair<arma::mat, double>> cases = {{seed000, 4e-15},
                                                           {arma::mat(rng.normal(64, 768, 1.0) + 0.3), 1e-13}};
  for (const auto& [m, tol] : cases) {
    const arma::mat centred = m.each_col() - arma::mean(m, 1);
    const double gap = arma::abs(rms_norm(centred) - layer_norm(m)).max();
    std::printf("%llu x %llu: max |RMSNorm(x - mean) - LayerNorm(x)| = %.2e\n", (unsigned long long)m.n_rows,
                (unsigned long long)m.n_cols, gap);
    std::ostringstream fact;
    fact << "LayerNorm(x) = RMSNorm(x - mean(x)), same eps, to " << tol << " for " << m.n_cols << " features";
    nb::check(gap < tol, fact.str());
  }
}

// %% [markdown]
// ### RMSNorm's Jacobian
//
// For one row with $\gamma = 1$, $y = x \, \mathrm{rstd}$ with $\mathrm{ms} = x^T x / D$ and
// $\mathrm{rstd} = 1 / \sqrt{\mathrm{ms} + \epsilon}$. Differentiating,
//
// $$
// J = \frac{dy}{dx} = \mathrm{rstd} \left( I - x x^T \mathrm{rstd}^2 / D \right)
// $$
//
// Symmetric, and its eigenvectors are easy: any v orthogonal to x has
// J v = rstd v, and x itself has
//
// $$
// J x = \mathrm{rstd} \left( x - x \, \mathrm{ms} \, \mathrm{rstd}^2 \right) = \mathrm{rstd} \, \frac{\epsilon}{\mathrm{ms} + \epsilon} \, x
// $$
//
// So J has rank D for eps > 0: RMSNorm removes no direction exactly; it almost
// removes the scale direction x (by the factor $\epsilon / (\mathrm{ms} + \epsilon)$). LayerNorm's J
// (lesson 04) also removes the direction 1 exactly: $J \mathbf{1} = 0$, which is why the
// rows of LayerNorm's dx sum to zero. RMSNorm's J 1 is not zero, and its dx
// rows need not sum to zero. We take J from the tape, one backward per output
// (through the fused backward, and through the composed graph), and check each
// of these properties on two rows of seed 000.

// %%
arma::mat rmsnorm_jacobian(const arma::mat& row, bool fused) {
  const arma::uword D = row.n_cols;
  arma::mat J(D, D);
  for (arma::uword i = 0; i < D; ++i) {
    Tape tape;
    Var vx = tape.leaf(row, "x");
    Var g = tape.constant(arma::ones(1, D));
    Var y = fused ? ag::rmsnorm_fused(vx, g, eps) : ag::rmsnorm_composed(vx, g, eps);
    arma::mat unit(1, D, arma::fill::zeros);
    unit(i) = 1;
    tape.backward(y, unit);  // row i of J: dy_i / dx
    J.row(i) = vx.grad();
  }
  return J;
}

NB_CELL {
  for (arma::uword r : {0u, 4u}) {
    const arma::vec v = seed000.row(r).t();
    const double D = 3, ms = arma::dot(v, v) / D, rstd = 1 / std::sqrt(ms + eps);
    const arma::mat J = rmsnorm_jacobian(seed000.row(r), true);
    const arma::mat closed_form = rstd * (arma::eye(3, 3) - v * v.t() * rstd * rstd / D);
    arma::vec eigenvalues;
    arma::eig_sym(eigenvalues, J);  // ascending
    const std::string name = "seed 000 row " + std::to_string(r);
    std::cout << name << ": ms = " << ms << ", rstd = " << rstd << ", eigenvalues of J: " << eigenvalues.t()
              << "  |J 1| = " << arma::norm(J * arma::ones(3)) << "\n";
    const double tol = 1e-12 * rstd;
    nb::check_close(name + ": fused J = composed J", J, rmsnorm_jacobian(seed000.row(r), false), tol);
    nb::check_close(name + ": J = rstd (I - x x^T rstd^2 / D)", J, closed_form, tol);
    nb::check_close(name + ": J is symmetric", J, arma::mat(J.t()), tol);
    nb::check_close(name + ": J x = rstd eps / (ms + eps) x", arma::mat(J * v), arma::mat(rstd * eps / (ms + eps) * v), tol);
    nb::check_close(name + ": smallest eigenvalue rstd eps / (ms + eps)", eigenvalues(0), rstd * eps / (ms + eps), tol);
    nb::check_close(name + ": the other two equal rstd", arma::mat(eigenvalues.tail(2)), arma::mat(2, 1, arma::fill::value(rstd)), tol);
    nb::check(arma::rank(J) == 3, name + ": J has full rank D = 3");
    nb::check(arma::norm(J * arma::ones(3)) > 0.1 * rstd, name + ": |J 1| > 0.1 rstd: 1 is not a null vector");
  }
}

// %% [markdown]
// Row 4, [0.663, 0.779, 0.648], is where the two differ most. Its variance is
// only 343 eps, so LayerNorm magnifies its small spread by rstd = 17 and keeps
// a scale eigenvalue of 0.05 (lesson 04). Its mean square is 0.49, dominated by
// the mean: RMSNorm scales it by 1.43 and keeps the offset, and its scale
// eigenvalue is 3e-5. Being nearly constant, row 4 points nearly along 1, so
// RMSNorm's J 1 is smaller for it (0.21, against 1.87 for row 0): a constant
// row c 1 *is* the scale direction, and $J \mathbf{1} = \mathrm{rstd} \, \epsilon / (c^2 + \epsilon) \, \mathbf{1}$ would be
// tiny. RMSNorm removes the mean's direction only when it is the row's own
// direction; LayerNorm removes it always.
//
// ### Small D: how much the centring removes
//
// Centring removes each row's component along 1, a fraction $D \, \mathrm{mean}^2 / |x|^2$
// of the row's sum of squares, and one of its D degrees of freedom; the
// division removes another (the scale). LayerNorm's output rows therefore lie
// in the (D - 1)-dimensional plane orthogonal to 1, on a sphere of radius
// $\sqrt{D \, \mathrm{var} / (\mathrm{var} + \epsilon)}$, just under $\sqrt{D}$: D - 2 free numbers per row.
// RMSNorm keeps the plane's complement and only removes the scale: its rows
// lie on a sphere of radius $\sqrt{D \, \mathrm{ms} / (\mathrm{ms} + \epsilon)}$, with D - 1 free numbers.
// For D = 768 the difference is one number in 767. For seed 000's D = 3 it is
// one of two: LayerNorm's rows lie on a circle.

// %%
NB_CELL {
  const arma::uword D = seed000.n_cols;
  const arma::mat ln = layer_norm(seed000), rn = rms_norm(seed000);
  const arma::vec means = arma::mean(seed000, 1), squares = arma::sum(arma::square(seed000), 1);
  const arma::vec removed = D * arma::square(means) / squares;  // share of |x|^2 along 1
  const arma::vec var = arma::mean(arma::square(seed000.each_col() - means), 1);
  std::printf("row   share of |x|^2 centring removes   |LayerNorm row|   |RMSNorm row|\n");
  for (arma::uword r = 0; r < seed000.n_rows; ++r) {
    std::printf("%3llu   %20.1f%%            %10.4f       %10.4f\n", (unsigned long long)r, 100 * removed(r),
                arma::norm(ln.row(r)), arma::norm(rn.row(r)));
  }
  arma::vec singular = arma::svd(ln);
  std::cout << "singular values of the 5 x 3 LayerNorm output: " << singular.t();
  nb::check(removed(4) > 0.99, "centring removes over 99% of row 4's sum of squares");
  nb::check_close("every LayerNorm row sums to 0 (the plane orthogonal to 1)", arma::mat(arma::sum(ln, 1)),
                  arma::zeros(5, 1), 1e-14);
  nb::check_close("|LayerNorm row| = sqrt(D var / (var + eps))", arma::mat(arma::sqrt(arma::sum(arma::square(ln), 1))),
                  arma::mat(arma::sqrt(D * var / (var + eps))), 1e-12);
  nb::check(singular(2) < 1e-14 * singular(0), "the LayerNorm outputs span 2 of the 3 dimensions");
  nb::check(arma::svd(rn)(2) > 0.1, "the RMSNorm outputs span all 3");
  ag::Rng rng(5);
  const arma::mat wide = rng.normal(64, 768, 1.0);
  const arma::vec wide_removed =
      768 * arma::square(arma::vec(arma::mean(wide, 1))) / arma::vec(arma::sum(arma::square(wide), 1));
  std::printf("64 rows of 768 standard normal features: centring removes %.3f%% of |x|^2 on average\n",
              100 * arma::mean(wide_removed));
  nb::check(arma::mean(wide_removed) < 0.01, "for D = 768 centred features it removes under 1%");

  // The circle: LayerNorm's rows in coordinates of the plane orthogonal to 1.
  const arma::vec u = arma::normalise(arma::vec{1, -1, 0}), w = arma::normalise(arma::vec{1, 1, -2});
  std::vector<double> cx, cy, px, py;
  for (int k = 0; k <= 100; ++k) {
    cx.push_back(std::sqrt(3.0) * std::cos(2 * M_PI * k / 100));
    cy.push_back(std::sqrt(3.0) * std::sin(2 * M_PI * k / 100));
  }
  for (arma::uword r = 0; r < ln.n_rows; ++r) {
    px.push_back(arma::dot(ln.row(r).t(), u));
    py.push_back(arma::dot(ln.row(r).t(), w));
  }
  nb::Plot plot{"circle", "Seed 000 after LayerNorm, in the plane orthogonal to (1, 1, 1)", "along (1, -1, 0)",
                "along (1, 1, -2)", false, false, {}, {"set size ratio -1", "set key inside center center"}};
  plot.add("radius sqrt(3)", cx, cy);
  plot.add("the 5 rows", px, py, "points pt 7 ps 1.5");
  nb::draw(plot);
}

// %% [markdown]
// Whatever the three inputs, LayerNorm with D = 3 returns a point on (just
// inside, by eps) a circle: one angle per token. Row 4's nearly constant
// values, whose spread is a few hundredths, become a point on that circle as
// far out as any other. Intuitions built on D = 3 examples (the seeds') do not
// carry over to D = 768, where the centring removes one direction of 768 and
// LayerNorm and RMSNorm of roughly centred activations nearly agree.
//
// ## Parameters
//
// Seed 002: "LayerNorm has 2 x d_model trainable parameters ... with d_model = 512,
// LayerNorm has 1024 parameters." We count them on the modules of `nn/`.

// %%
NB_CELL {
  const arma::uword d_model = 512;
  ag::LayerNorm layer_norm("ln", d_model, ag::Impl::Fused);
  ag::RMSNorm rms_norm("rms", d_model, ag::Impl::Fused);
  auto count = [](ag::Module& m) {
    std::size_t n = 0;
    for (ag::Parameter* p : m.parameters()) n += p->value().n_elem;
    return n;
  };
  std::cout << "d_model = " << d_model << ": LayerNorm " << count(layer_norm) << " parameters (gamma, beta), RMSNorm "
            << count(rms_norm) << " (gamma only)\n";
  nb::check(count(layer_norm) == 2 * d_model, "LayerNorm has 2 x d_model = 1024 parameters");
  nb::check(count(rms_norm) == d_model, "RMSNorm has d_model = 512 parameters");
}

// %% [markdown]
// (BatchNorm also has 2 x d_model learned parameters, plus, for inference, a
// running mean and variance per feature that are tracked, not learned.)
//
// ## Speed
//
// Seed 002 says RMSNorm is "~10-15% faster" than LayerNorm. A claim about speed
// needs a measurement that could tell 10% from noise. We time forward plus
// backward of each version on a 512 x 768 matrix (a batch of 512 tokens of a
// small Transformer) in one thread, the way a benchmark should: one untimed
// warm-up run of each version first (it faults in the memory and warms the
// caches), then 9 rounds in which the versions take turns, so a slow moment of
// the machine hits all of them alike, and for each version the **median** of
// its 9 runs with the spread (fastest and slowest). Nothing below asserts a
// timing: the numbers are whatever this machine did while the notebook ran,
// and other programs may have been running on it at the same time.
// `autograd bench` is the measurement to quote (more repeats, larger shapes,
// PyTorch alongside; docs/performance.md).

// %%
// Forward plus backward of one version, in milliseconds.
double run_once_ms(const std::function<Var(Tape&, Var, Var, Var)>& norm, const arma::mat& input, const arma::mat& dy) {
  Tape tape;
  Var v = tape.leaf(input, "x");
  Var g = tape.leaf(arma::ones(1, input.n_cols), "gamma");
  Var b = tape.leaf(arma::zeros(1, input.n_cols), "beta");
  const auto start = std::chrono::steady_clock::now();
  Var y = norm(tape, v, g, b);
  tape.backward(y, dy);
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

NB_CELL {
  arma::arma_rng::set_seed(7);
  const arma::mat input = arma::randn(512, 768);
  const arma::mat dy = arma::ones(arma::size(input)) * 0.01;
  struct Row {
    const char* name;
    std::function<Var(Tape&, Var, Var, Var)> f;
  };
  const std::vector<Row> rows = {
      {"LayerNorm composed", [](Tape&, Var v, Var g, Var b) { return ag::layernorm_composed(v, g, b); }},
      {"LayerNorm fused", [](Tape&, Var v, Var g, Var b) { return ag::layernorm_fused(v, g, b); }},
      {"RMSNorm composed", [](Tape&, Var v, Var g, Var) { return ag::rmsnorm_composed(v, g); }},
      {"RMSNorm fused", [](Tape&, Var v, Var g, Var) { return ag::rmsnorm_fused(v, g); }},
      {"BatchNorm composed", [](Tape&, Var v, Var g, Var b) { return ag::batchnorm_composed(v, g, b); }},
  };
  const int rounds = 9;
  std::vector<std::vector<double>> runs(rows.size());
  for (const Row& r : rows) run_once_ms(r.f, input, dy);  // warm-up, not timed
  for (int round = 0; round < rounds; ++round) {
    for (std::size_t k = 0; k < rows.size(); ++k) runs[k].push_back(run_once_ms(rows[k].f, input, dy));
  }
  nb::Plot plot{"speed", "Forward + backward on 512 x 768: median of 9 interleaved runs, bars from fastest to slowest",
                "", "milliseconds", false, false, {},
                {"set style fill solid 0.5", "set boxwidth 0.6", "set yrange [0:*]", "unset key",
                 "set xtics rotate by -20", "set xrange [-0.6:4.6]"}};
  std::vector<double> xs, medians, lows, highs;
  std::string xtics = "set xtics (";
  std::printf("%-20s %10s %10s %10s\n", "", "median ms", "fastest", "slowest");
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const double m = median(runs[k]);
    const double lo = *std::min_element(runs[k].begin(), runs[k].end());
    const double hi = *std::max_element(runs[k].begin(), runs[k].end());
    std::printf("%-20s %10.2f %10.2f %10.2f\n", rows[k].name, m, lo, hi);
    xs.push_back(double(k));
    medians.push_back(m);
    lows.push_back(lo);
    highs.push_back(hi);
    xtics += std::string(k ? ", " : "") + "\"" + rows[k].name + "\" " + std::to_string(k);
  }
  plot.extra.push_back(xtics + ")");
  plot.add("median", xs, medians, "boxes");
  // The spread: a vertical segment from the fastest to the slowest run of each version.
  for (std::size_t k = 0; k < rows.size(); ++k) {
    plot.add("spread", {xs[k], xs[k]}, {lows[k], highs[k]}, "linespoints lw 2 lc rgb 'black' pt 1");
  }
  nb::draw(plot);
  std::printf("median ratios: fused / composed LayerNorm %.2f, RMSNorm %.2f;  RMSNorm fused / LayerNorm fused %.2f\n",
              medians[1] / medians[0], medians[3] / medians[2], medians[3] / medians[1]);
  nb::check(runs[0].size() == std::size_t(rounds), "every version ran 9 timed rounds (the times are not asserted)");
}

// %% [markdown]
// Read the ratios together with the bars: where two versions' spreads overlap,
// this run cannot order them. The composed graphs allocate a matrix for every
// intermediate and make a pass over memory for each of their nodes; the fused
// kernels make far fewer passes, but not one: this project's fused forward
// reads x twice (statistics, then y) and its backward reads x and dy twice
// (row sums, then dx), because Armadillo stores columns contiguously and
// LayerNorm works on rows (bench/README.md, "What stands in the way"). The fused RMSNorm
// kernels make the same passes; what they save is the mean and its
// subtraction, not a pass over memory. For memory-bound kernels like these the
// gain is small and depends on the machine, the shape and the implementation:
// a claim like "10-15% faster" has to be measured, with a benchmark, not
// repeated.
//
// ## What to remember
//
// - LayerNorm and RMSNorm normalise each token over its features; BatchNorm normalises each feature over the batch.
// - Only BatchNorm's output depends on the other samples in the batch: padding, tiny batches and
//   future tokens all change it, which is why Transformers use LayerNorm or RMSNorm.
// - BatchNorm trains with batch statistics and infers with running ones: the two disagree during
//   the warm-up of the running averages and, with small batches, all the time.
// - $\mathrm{LayerNorm}(x) = \mathrm{RMSNorm}(x - \mathrm{mean}(x))$. RMSNorm's Jacobian has full rank (no null vector along 1);
//   LayerNorm's removes the direction 1 exactly, which matters most when D is small (D = 3: a circle).
// - LayerNorm has 2 x d_model parameters, RMSNorm d_model.
// - Speed is measured (warm-up, interleaving, median and spread), never assumed, and never asserted in a test.

// %% [markdown]
// ## Exercises
//
// 1. (medium) In eval mode BatchNorm is an affine map per feature, so it can be folded
//    into the Linear layer before it: find W' and b' with
//    BatchNorm(x W + b) = x W' + b', and check it to 1e-12 with `ag::BatchNorm`
//    after a few training batches. Why can it not be folded in training mode?
// 2. (medium) For which rows do RMSNorm and LayerNorm differ most? Use the matrix x of
//    this lesson to explain, and say why the difference matters less when D is
//    large and the features are roughly centred (and why D = 3, seed 000's
//    size, is the worst case for such intuitions).
// 3. (easy) What does `ag::BatchNorm` do with a batch of one row in training mode, and
//    in eval mode, and why? What does PyTorch's `BatchNorm1d` do? Had the
//    running variance tracked the biased batch variance, what would it converge
//    to for batches of N (the lesson measured N = 2)?
// 4. (medium) With the tape, compute d y_0 / d x_3 (token 0's output, token 3's input)
//    for BatchNorm and for LayerNorm over the 4 tokens of this lesson. Which is
//    zero, and what does that mean for a causal language model?
// 5. (medium) Design a timing experiment that could tell a 10% difference between
//    LayerNorm and RMSNorm from noise. What would you report? Run it with
//    `autograd bench` and say whether seed 002's "10-15% faster" holds here.
