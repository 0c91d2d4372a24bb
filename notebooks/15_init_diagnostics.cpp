// %% [markdown]
// # Lesson 15: initialisation diagnostics
//
// makemore (part 3) checks a network before it trains: the first loss against
// log V, the histograms of the activations layer by layer, and during the
// first steps the ratio of each update to the weights it changes. It starts
// from why a layer's weights have the scale they do (LeCun, Xavier, Kaiming,
// and tanh's saturation), measured on a deep MLP. Then this
// lesson runs those checks on the project's GPT (nn/gpt.h), with the
// initialisation of nn/gpt.cpp and with its two scalings undone (the head's
// 0.1 and the residual projections' $1/\sqrt{2 \cdot \text{layers}}$), which lesson 10 showed
// to be what the first loss needs.

// %%
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "autograd/rng.h"
#include "data/text.h"
#include "nn/gpt.h"
#include "nn/optim.h"
#include "notebooks/notebook.h"
#include "ops/ops.h"
#include "train/config.h"
#include "train/text_task.h"
#include "train/trainer.h"

using ag::Tape;
using ag::Var;

// Counts of v in `bins` equal bins over [lo, hi], as (centre, count) for a plot.
void histogram(const arma::vec& v, double lo, double hi, arma::uword bins, std::vector<double>& x, std::vector<double>& y) {
  const arma::uvec counts = arma::hist(arma::clamp(v, lo, hi), arma::linspace(lo, hi, bins));
  const arma::vec centres = arma::linspace(lo, hi, bins);
  x.assign(centres.begin(), centres.end());
  y.assign(counts.begin(), counts.end());
}

// %% [markdown]
// ## Before the GPT: the scale of a layer's weights
//
// makemore part 3 starts from a plain stack of Linear layers and tanh, and so
// do we. Take one layer, $y_j = \sum_i x_i W_{ij}$ over $n_\mathrm{in}$ inputs, with
// inputs and weights independent, of mean zero, and variances $\sigma_x^2$ and
// $\sigma_W^2$. A sum of independent terms adds their variances:
//
// $$\mathrm{var}(y_j) = n_\mathrm{in}\, \sigma_W^2\, \sigma_x^2 .$$
//
// To pass the signal on at the same size, $\sigma_W^2 = 1 / n_\mathrm{in}$ (LeCun et al.
// 1998). Backward runs the same sum the other way, $dx_i = \sum_j W_{ij}\, dy_j$ over
// $n_\mathrm{out}$ outputs, and keeps the gradient's size when $\sigma_W^2 = 1 / n_\mathrm{out}$.
// **Xavier** (Glorot and Bengio 2010) takes the compromise
// $\sigma_W^2 = 2 / (n_\mathrm{in} + n_\mathrm{out})$, drawn uniform in
// $\pm\sqrt{6 / (n_\mathrm{in} + n_\mathrm{out})}$ (a uniform on $\pm a$ has variance $a^2 / 3$).
// A ReLU zeroes half of a symmetric input and so halves its second moment;
// **Kaiming** (He et al. 2015) doubles the variance to make up for it,
// $\sigma_W^2 = 2 / n_\mathrm{in}$, which is `nn/linear`'s default for the MLPs (lesson 06).
// tanh is the identity near 0 but squashes everything beyond about $\pm 2$,
// so a gain above 1 is needed to keep its layers' outputs from shrinking; PyTorch
// (`calculate_gain`) and makemore use 5/3.
//
// Too large a scale is worse than too small for tanh: a pre-activation of
// size 10 puts tanh at $\pm 1$, where its derivative $1 - \tanh^2$ is
// about zero, and the gradient through that unit vanishes (makemore counts the
// units with $|\tanh| > 0.97$ as saturated). Below, eight tanh layers of width 128
// on 512 inputs drawn from $N(0, 1)$, with $W$ drawn from $N(0, \sigma_W^2)$ at three
// scales: $\sigma_W = 1$, $1 / \sqrt{n_\mathrm{in}}$ and $(5/3) / \sqrt{n_\mathrm{in}}$;
// and the same stack with ReLU at $1 / n_\mathrm{in}$ and Kaiming's $2 / n_\mathrm{in}$.
// For each layer: the activations' size (rms), the share of saturated tanh units, and
// the sd of the loss's gradient with respect to the layer's weights (the loss
// is the mean of the last layer's output times a fixed random matrix).

// %%
const arma::uword kDeepWidth = 128, kDeepLayers = 8;

struct DeepStats {
  std::vector<double> sd, saturated, slope, grad_sd;  // one entry per layer
};

DeepStats deep_stack(double sd_w, bool use_tanh) {
  ag::Rng rng(21);
  Tape tape;
  Var h = tape.constant(rng.normal(512, kDeepWidth, 1.0));
  std::vector<Var> weights, outputs;
  for (arma::uword l = 0; l < kDeepLayers; ++l) {
    weights.push_back(tape.leaf(rng.normal(kDeepWidth, kDeepWidth, sd_w), "W" + std::to_string(l)));
    h = ag::matmul(h, weights.back());
    h = use_tanh ? ag::tanh(h) : ag::relu(h);
    outputs.push_back(h);
  }
  tape.backward(ag::mean(h * tape.constant(rng.normal(512, kDeepWidth, 1.0))));
  DeepStats s;
  for (arma::uword l = 0; l < kDeepLayers; ++l) {
    const arma::vec out = arma::vectorise(outputs[l].value());
    s.sd.push_back(std::sqrt(arma::mean(arma::square(out))));  // about 0 mean; ReLU's second moment
    s.saturated.push_back(double(arma::accu(arma::abs(out) > 0.97)) / double(out.n_elem));
    s.slope.push_back(arma::mean(1 - arma::square(out)));  // tanh's local derivative, on average
    s.grad_sd.push_back(arma::stddev(arma::vectorise(weights[l].grad())));
  }
  return s;
}

NB_CELL {
  const double fan = double(kDeepWidth);
  const DeepStats big = deep_stack(1.0, true), lecun = deep_stack(1 / std::sqrt(fan), true),
                  gain = deep_stack(5.0 / 3.0 / std::sqrt(fan), true);
  const DeepStats relu_half = deep_stack(std::sqrt(1 / fan), false), kaiming = deep_stack(std::sqrt(2 / fan), false);
  std::printf("tanh layers:  rms(h) and %% saturated            |  sd of dL/dW          | ReLU: rms(h)\n");
  std::printf("layer   sW=1        1/sqrt(n)    (5/3)/sqrt(n) |  sW=1      (5/3)/sqrt(n)| 1/n      2/n\n");
  for (arma::uword l = 0; l < kDeepLayers; ++l) {
    std::printf("%5llu  %.3f %4.0f%%  %.3f %4.1f%%  %.3f %4.1f%%  | %9.3g  %9.3g | %.4f  %.4f\n",
                (unsigned long long)(l + 1), big.sd[l], 100 * big.saturated[l], lecun.sd[l], 100 * lecun.saturated[l],
                gain.sd[l], 100 * gain.saturated[l], big.grad_sd[l], gain.grad_sd[l], relu_half.sd[l], kaiming.sd[l]);
  }
  const std::size_t last = kDeepLayers - 1;
  bool all_saturated = true;
  for (double f : big.saturated) all_saturated = all_saturated && f > 0.75;
  nb::check(all_saturated, "sW = 1: over 75% of the tanh units are saturated in every layer");
  std::printf("mean of tanh's derivative 1 - h^2 at layer 8: sW = 1 %.3f, (5/3)/sqrt(n) %.3f\n", big.slope[last],
              gain.slope[last]);
  std::printf("sd of dL/dW, layer 1 over layer 8: sW = 1 %.0f, (5/3)/sqrt(n) %.2f\n", big.grad_sd[0] / big.grad_sd[last],
              gain.grad_sd[0] / gain.grad_sd[last]);
  nb::check(big.slope[last] < 0.2 && gain.slope[last] > 0.4,
            "tanh's mean derivative: under 0.2 at sW = 1, over 0.4 at the gain 5/3");
  nb::check(big.grad_sd[0] > 100 * big.grad_sd[last] && gain.grad_sd[0] < 4 * gain.grad_sd[last],
            "dL/dW from layer 8 to layer 1: grows over 100x at sW = 1, under 4x at the gain 5/3");
  nb::check(lecun.sd[last] < 0.6 * lecun.sd[0], "1/sqrt(n): tanh shrinks the activations, layer 8 under 0.6x layer 1");
  nb::check(gain.sd[last] > 0.8 * gain.sd[0] && gain.saturated[last] < 0.1,
            "(5/3)/sqrt(n): layer 8 keeps over 0.8x layer 1's size, under 10% saturated");
  nb::check(relu_half.sd[last] > 1.0 / 32 && relu_half.sd[last] < 1.0 / 8,
            "ReLU, 1/n: the second moment halves at each layer, layer 8's rms within 2x of 2^-4 = 1/16");
  nb::check(kaiming.sd[last] > 0.5 * kaiming.sd[0] && kaiming.sd[last] < 2 * kaiming.sd[0],
            "ReLU, Kaiming 2/n: layer 8 within 2x of layer 1");
}

// %% [markdown]
// The measurements follow the derivation. At $\sigma_W = 1$ most units are
// saturated in every layer and tanh's derivative is near 0 on average: a unit
// saturated for every input would never learn (a dead unit). The gradient
// that does flow back is multiplied at every layer by a $W$ of size
// $\sqrt{n_\mathrm{in}}$ as well as by $1 - \tanh^2$, and here the product is
// above 1: the weights' gradients grow over a hundredfold from the last layer
// to the first (printed above), so no one learning rate suits every layer. At
// the gain 5/3 they stay within a small factor. At $1 / \sqrt{n_\mathrm{in}}$ tanh's squashing shrinks
// the signal layer by layer; 5/3 keeps it. With ReLU, $1 / n_\mathrm{in}$ halves the
// second moment at each layer ($2^{-8}$ after eight, so an rms of about
// $2^{-4} = 1/16$ from inputs of rms 1) and Kaiming's $2 / n_\mathrm{in}$ holds it. A norm (lesson
// 06, lesson 10) makes a stack far less sensitive to all this, which is
// why the GPT below cares about only two scales, the head's and the residual projections'.
//
// ## The residual stream, block by block
//
// Twelve blocks without norms (placement none: nothing rescales the stream) of
// width 32, on 64 tokens whose embeddings have the GPT's scale (sd
// $\sqrt{2 / 32}$, token plus position). After each block we measure the
// standard deviation of the stream, with the residual projections as Xavier
// draws them (Glorot and Bengio 2010) and scaled by $1/\sqrt{24}$ as GPT-2 does
// (Radford et al. 2019, sec. 2.3), and draw the histogram
// of the stream after blocks 1, 6 and 12.

// %%
const arma::uword kWidth = 32, kLayers = 12;

std::vector<arma::mat> stream(double scale) {
  ag::Rng rng(12);
  ag::BlockSpec spec;
  spec.width = kWidth, spec.heads = 4, spec.placement = ag::Placement::None, spec.impl = ag::Impl::Fused;
  Tape tape;
  Var x = tape.constant(ag::Rng(5).normal(64, kWidth, std::sqrt(2.0 / kWidth)));
  std::vector<arma::mat> after;
  for (arma::uword l = 0; l < kLayers; ++l) {
    ag::TransformerBlock block("h" + std::to_string(l), spec, rng);
    block.scale_residual_projections(scale);
    x = block.forward(x);
    after.push_back(x.value());
  }
  return after;
}

NB_CELL {
  const std::vector<arma::mat> raw = stream(1.0), scaled = stream(1.0 / std::sqrt(2.0 * kLayers));
  std::printf("%6s %12s %12s\n", "block", "sd (Xavier)", "sd (scaled)");
  std::vector<double> blocks, sd_raw, sd_scaled;
  for (arma::uword l = 0; l < kLayers; ++l) {
    blocks.push_back(double(l + 1));
    sd_raw.push_back(arma::stddev(arma::vectorise(raw[l])));
    sd_scaled.push_back(arma::stddev(arma::vectorise(scaled[l])));
    std::printf("%6llu %12.3f %12.3f\n", (unsigned long long)(l + 1), sd_raw.back(), sd_scaled.back());
  }
  nb::check(sd_raw.back() > 10 * sd_raw.front(), "Xavier projections: the stream's sd grows over 10x in 12 blocks");
  nb::check(sd_scaled.back() < 1.1 * sd_scaled.front(), "scaled by 1/sqrt(24): it grows by under 10%");
  nb::Plot plot{"stream_histograms", "The residual stream after blocks 1, 6 and 12 (placement none)", "value",
                "count (of 64 x 32)", false, true, {}, {"set key top right"}};
  for (arma::uword l : {0u, 5u, 11u}) {
    std::vector<double> x, y;
    histogram(arma::vectorise(raw[l]), -6, 6, 61, x, y);
    plot.add("Xavier, block " + std::to_string(l + 1), x, y, "histeps");
  }
  std::vector<double> x, y;
  histogram(arma::vectorise(scaled[11]), -6, 6, 61, x, y);
  plot.add("scaled, block 12", x, y, "histeps lw 2");
  nb::draw(plot);
}

// %% [markdown]
// With Xavier's projections each block adds a contribution of about the
// stream's own size, and the sublayers see an input that is already larger,
// so the stream's spread grows faster and faster; the histogram after block
// 12 is wide and clipped at $\pm 6$ here. Scaled by $1/\sqrt{24}$, the 24
// contributions together add about as much variance as one would, and the
// histogram after block 12 is the one after block 1.
//
// ## The first logits
//
// The head maps the last stream to 27 logits. A uniform guess has all logits
// equal, a loss of $\log 27 = 3.30$. Below, the logits of a 4-block GPT of
// width 64 (the default) at initialisation, on 64 words, as nn/gpt.cpp
// initialises it and with the head 10 times larger (Xavier's draw).

// %%
const ag::TextData words = ag::load_words();
ag::Rng split_rng(3);
const ag::TextSplit split = ag::split_lines(words, 0.1, split_rng);
const std::vector<ag::Sequence> train_seqs = ag::make_sequences(split.train, 32);

ag::GptSpec default_spec() {
  ag::GptSpec spec;
  spec.vocab = words.vocab.size(), spec.layers = 4, spec.block.width = 64, spec.block.heads = 4;
  spec.block.impl = ag::Impl::Fused;
  return spec;
}

ag::Parameter* find(ag::Gpt& model, const std::string& name) {
  for (ag::Parameter* p : model.parameters()) if (p->name() == name) return p;
  throw std::runtime_error("no parameter " + name);
}

NB_CELL {
  const ag::SequenceBatch b = ag::gather_sequences(train_seqs, 0, 64);
  nb::Plot plot{"logit_histograms", "Logits of the untrained 4-block GPT on 64 words", "logit", "count", false, false, {},
                {"set key top right"}};
  std::vector<double> losses, sds;
  for (double head : {1.0, 10.0}) {
    ag::Rng rng(1);
    ag::Gpt model(default_spec(), rng);
    find(model, "head.weight")->mutable_value() *= head;
    Tape tape;
    ag::NoGrad no_grad(tape);
    Var logits = model.logits(tape, b.input, b.lengths);
    losses.push_back(ag::softmax_cross_entropy(logits, b.target).item());
    sds.push_back(arma::stddev(arma::vectorise(logits.value())));
    std::printf("head x %-3g: logits sd %.3f, first loss %.4f (log 27 = %.4f)\n", head, sds.back(), losses.back(),
                std::log(27.0));
    std::vector<double> x, y;
    histogram(arma::vectorise(logits.value()), -4, 4, 81, x, y);
    plot.add(head == 1 ? "as nn/gpt.cpp initialises it" : "head x 10 (Xavier)", x, y, "histeps");
  }
  nb::draw(plot);
  nb::check(std::abs(losses[0] - std::log(27.0)) < 0.05, "as initialised: the first loss is within 0.05 of log 27");
  nb::check(losses[1] > std::log(27.0) + 0.3, "head x 10: over 0.3 nats above log 27");
  nb::check(std::abs(sds[1] / sds[0] - 10) < 1e-6, "the logits' sd scales with the head exactly (x 10)");
}

// %% [markdown]
// The head is linear, so its scale is the logits' scale: 10 times the head,
// 10 times the spread. Logits of spread 1 already cost over 0.3 nats: the
// model starts out confident and wrong, and its first steps go to shrinking
// the head instead of learning.
//
// ## The same check in any run
//
// `ag::train`, and with it `autograd train`, writes its first metrics row
// before the first step: step 0, with the validation loss of the untrained
// model and the first batch's loss (metrics.csv's first row and the log's
// first line). So the first check can be read off any run. Below, the default
// GPT run (`autograd train --model gpt`, 4 blocks of width 64 on the words),
// stopped as soon as that row is written.

// %%
struct StopAtStepZero {};

// Row 0 of a run of `config`: the trainer's loss before any step (train/trainer.h).
ag::Metrics step_zero(const ag::RunConfig& config) {
  ag::Metrics row;
  ag::TrainCallbacks callbacks;
  callbacks.on_eval = [&row](const ag::Metrics& m) {
    row = m;
    throw StopAtStepZero{};
  };
  ag::TextTask task(config, ag::prepare_lm_data(config));
  try {
    ag::train(config, task, callbacks);
  } catch (const StopAtStepZero&) {
  }
  return row;
}

NB_CELL {
  ag::RunConfig config = ag::gpt_config();
  config.threads = 1;
  const ag::Metrics row = step_zero(config);
  std::printf("step %lld, epoch %g: first batch's loss %.4f, validation loss %.4f (log 27 = %.4f)\n", row.step,
              row.epoch, row.train_loss, row.val_loss, std::log(27.0));
  nb::check(row.step == 0 && row.epoch == 0, "the run's first row is step 0, before any step");
  nb::check(std::abs(row.val_loss - std::log(27.0)) < 0.05, "step 0: the validation loss is within 0.05 of log 27");
  nb::check(std::abs(row.train_loss - std::log(27.0)) < 0.05, "step 0: the first batch's loss is within 0.05 of log 27");
}

// %% [markdown]
// ## Update-to-data ratios
//
// makemore's last check runs during training: for each weight matrix, the
// size of one step relative to the weights, sd(delta W) / sd(W). Around
// 1e-3 per step is the rule of thumb (Karpathy): much smaller and the layer
// learns slowly, much larger and it thrashes. Below, 100 steps of Adam
// (lr 3e-3, the default peak; no warm-up) on batches of 32 words, and the
// ratio of four matrices at every step, on a log scale.

// %%
NB_CELL {
  ag::Rng rng(1);
  ag::Gpt model(default_spec(), rng);
  ag::AdamOptions options;
  options.lr = 3e-3;
  ag::Adam adam(model.parameters(), options);
  const double head_sd_at_init = arma::stddev(arma::vectorise(find(model, "head.weight")->value()));
  const std::vector<std::string> names = {"wte.weight", "h0.attn.qkv.weight", "h3.ffn.proj.weight", "head.weight"};
  std::vector<std::vector<double>> ratios(names.size());
  std::vector<double> steps;
  Tape tape;
  for (int step = 0; step < 100; ++step) {
    const ag::SequenceBatch b = ag::gather_sequences(train_seqs, std::size_t(step) * 32, 32);
    tape.clear();
    adam.zero_grad();
    tape.backward(ag::softmax_cross_entropy(model.logits(tape, b.input, b.lengths), b.target));
    ag::clip_grad_norm(model.parameters(), 1.0);
    std::vector<arma::mat> before;
    for (const std::string& n : names) before.push_back(find(model, n)->value());
    adam.step();
    steps.push_back(step + 1);
    for (std::size_t k = 0; k < names.size(); ++k) {
      const arma::mat& now = find(model, names[k])->value();
      ratios[k].push_back(arma::stddev(arma::vectorise(now - before[k])) / arma::stddev(arma::vectorise(now)));
    }
  }
  nb::Plot plot{"update_ratios", "sd(update) / sd(weights) per step, Adam lr 3e-3", "step", "ratio", false, true, {},
                {"set key inside top right", "set yrange [5e-4:1]"}};
  plot.add("makemore's rough guide, 1e-3", {steps.front(), steps.back()}, {1e-3, 1e-3}, "lines dt 2 lc rgb 'black'");
  for (std::size_t k = 0; k < names.size(); ++k) {
    plot.add(names[k], steps, ratios[k]);
    std::printf("%-20s step 1 %.3g, step 10 %.3g, step 100 %.3g; sd(W) now %.3g\n", names[k].c_str(), ratios[k][0],
                ratios[k][9], ratios[k][99], arma::stddev(arma::vectorise(find(model, names[k])->value())));
  }
  nb::draw(plot);
  bool in_range = true;
  for (std::size_t k = 0; k + 1 < names.size(); ++k) {
    for (std::size_t s = 9; s < 100; ++s) in_range = in_range && ratios[k][s] > 1e-4 && ratios[k][s] < 1e-1;
  }
  nb::check(in_range, "from step 10, every block and embedding matrix moves by 1e-4 to 1e-1 of its spread per step");
  nb::check(ratios[3][0] > ratios[1][0], "the small head moves by a larger fraction of itself than h0's qkv at step 1");
  bool at_100 = true;
  for (const std::vector<double>& r : ratios) at_100 = at_100 && r[99] > 5e-3 && r[99] < 2e-2;
  nb::check(at_100, "step 100: every ratio is between 5e-3 and 2e-2, above makemore's 1e-3");
  const double head_sd = arma::stddev(arma::vectorise(find(model, "head.weight")->value()));
  std::printf("sd(head.weight): %.4f at initialisation, %.4f after 100 steps\n", head_sd_at_init, head_sd);
  nb::check(head_sd_at_init > 0.01 && head_sd_at_init < 0.02 && head_sd > 3 * head_sd_at_init,
            "the head starts with sd between 0.01 and 0.02 and grows over 3x in 100 steps");
}

// %% [markdown]
// Adam's step is about lr in size for every weight whatever its gradient
// (lesson 06), so the ratio is about $\mathrm{lr} / \mathrm{sd}(W)$: matrices with small weights
// move by a larger fraction of themselves. The head starts at a tenth of
// Xavier's scale (sd 0.015, printed above), so its first ratio is about $3 \cdot 10^{-3} / 0.015 = 0.2$,
// the largest, and it falls as the head grows (over threefold by step 100,
// printed above) and Adam's steps shrink below lr. By step 100 every ratio sits
// between 5e-3 and 2e-2, above makemore's rough 1e-3 (the dashed line): at
// this rate with no warm-up the first updates are large. Keeping the first
// updates small is what a warm-up is for (lesson 12 writes one and measures
// it), and `autograd train` warms its rate up by default; this lesson does
// not measure whether that helps here.
//
// ## What to remember
//
// - A layer passes on $n_\mathrm{in} \sigma_W^2$ times its input's variance: $1/n_\mathrm{in}$ keeps a linear
//   stack level, Kaiming's $2/n_\mathrm{in}$ a ReLU stack, a gain of 5/3 a tanh stack; too large a scale
//   saturates tanh (its derivative near 0) and leaves the layers' gradients hundreds of times apart.
// - Check the first loss against $\log V$ before training (a run's step 0): far above it means confident wrong logits.
// - A histogram of each layer's output shows a stream that grows with depth; $1/\sqrt{2 \cdot \text{layers}}$ on the
//   residual projections keeps it level.
// - $\mathrm{sd}(\text{update}) / \mathrm{sd}(\text{weights})$ per step shows which layers learn fast and which slowly; with Adam it is
//   about $\mathrm{lr} / \mathrm{sd}(W)$.
//
// ## Exercises
//
// 1. (easy) The head's scale sets the logits' sd exactly (the lesson checks x 10).
//    For logits that are independent $N(0, s^2)$ across the 27 tokens, what is
//    the expected loss to second order in s? Compare with the two losses printed.
// 2. (medium) Repeat the stream measurement with 24 blocks and the scale $1/\sqrt{48}$.
//    Does the stream stay level? And with $1/\sqrt{24}$ (the wrong depth)?
// 3. (medium) Change the learning rate to 3e-2 and 3e-4 in the last cell. How do the
//    ratios move, and does the $\mathrm{lr} / \mathrm{sd}(W)$ rule predict it?
// 4. (medium) The head's ratio falls from 0.2 at step 1 to 0.011 at step 100, faster
//    than the others. Use the rule $\text{ratio} = \mathrm{lr} / \mathrm{sd}(W)$: what must have happened
//    to sd(head.weight)? Print it every 10 steps to check.
// 5. (easy) In the deep tanh stack, which $\sigma_W$ would Xavier's uniform draw give for
//    width 128, and which way should the activations' size move from layer to layer? Run
//    `deep_stack` with it to check.
