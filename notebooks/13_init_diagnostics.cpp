// %% [markdown]
// # Lesson 13: initialisation diagnostics
//
// makemore (part 3) checks a network before it trains: the first loss against
// log V, the histograms of the activations layer by layer, and during the
// first steps the ratio of each update to the weights it changes. This
// lesson runs those checks on the project's GPT (nn/gpt.h), with the
// initialisation of nn/gpt.cpp and with its two scalings undone (the head's
// 0.1 and the residual projections' 1/sqrt(2 layers)), which lesson 10 showed
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
// ## The residual stream, block by block
//
// Twelve blocks without norms (placement none: nothing rescales the stream) of
// width 32, on 64 tokens whose embeddings have the GPT's scale (sd
// sqrt(2 / 32), token plus position). After each block we measure the
// standard deviation of the stream, with the residual projections as Xavier
// draws them (Glorot and Bengio 2010) and scaled by 1/sqrt(24) as GPT-2 does
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
// 12 is wide and clipped at +-6 here. Scaled by 1/sqrt(24), the 24
// contributions together add about as much variance as one would, and the
// histogram after block 12 is the one after block 1.
//
// ## The first logits
//
// The head maps the last stream to 27 logits. A uniform guess has all logits
// equal, a loss of log 27 = 3.30. Below, the logits of a 4-block GPT of
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
}

// %% [markdown]
// Adam's step is about lr in size for every weight whatever its gradient
// (lesson 06), so the ratio is about lr / sd(W): matrices with small weights
// move by a larger fraction of themselves. The head starts at a tenth of
// Xavier's scale (sd 0.015), so its first ratio is about 3e-3 / 0.015 = 0.2,
// the largest, and it falls as the head grows (to 0.054 by step 100,
// printed above) and Adam's steps shrink below lr. By step 100 every ratio sits
// between 5e-3 and 1.5e-2, above makemore's rough 1e-3 (the dashed line): at
// this rate with no warm-up the first updates are large. Keeping the first
// updates small is what a warm-up is for (lesson 15 writes one and measures
// it), and `autograd train` warms its rate up by default; this lesson does
// not measure whether that helps here.
//
// ## What to remember
//
// - Check the first loss against log V before training: far above it means confident wrong logits.
// - A histogram of each layer's output shows a stream that grows with depth; 1/sqrt(2 layers) on the
//   residual projections keeps it level.
// - sd(update) / sd(weights) per step shows which layers learn fast and which slowly; with Adam it is
//   about lr / sd(W).
//
// ## Exercises
//
// 1. (easy) The head's scale sets the logits' sd exactly (the lesson checks x 10).
//    For logits that are independent $N(0, s^2)$ across the 27 tokens, what is
//    the expected loss to second order in s? Compare with the two losses printed.
// 2. (medium) Repeat the stream measurement with 24 blocks and the scale 1/sqrt(48).
//    Does the stream stay level? And with 1/sqrt(24) (the wrong depth)?
// 3. (medium) Change the learning rate to 3e-2 and 3e-4 in the last cell. How do the
//    ratios move, and does the lr / sd(W) rule predict it?
// 4. (medium) The head's ratio falls from 0.2 at step 1 to 0.011 at step 100, faster
//    than the others. Use the rule ratio = lr / sd(W): what must have happened
//    to sd(head.weight)? Print it every 10 steps to check.
