// %% [markdown]
// # Lesson 10: residual connections, and where LayerNorm sits
//
// A transformer block has two sublayers, attention and a feed-forward network
// (FFN: a Linear to 4 times the width, GELU, a Linear back; GELU is a smooth
// ReLU, measured in the first section below), and each is wrapped in a residual connection: the block adds the
// sublayer's output to its input instead of replacing it. Where the norm
// goes is the subject of this lesson. The seeds put it in two places: seed 000
// normalises the matrix it gets "after adding the Residual Connection" (post-LN,
// the original Transformer of Vaswani et al. 2017), and seed 002 says LayerNorm
// appears "before and/or after every Attention and FFN layer", because without
// it "activations in deep networks would explode or vanish". GPT-2 (Radford et
// al. 2019, sec. 2.3) puts it before (pre-LN), with one more LayerNorm after
// the last block:
//
// | placement | one sublayer f | the residual path |
// |---|---|---|
// | post-LN | x = LN(x + f(x)) | every LayerNorm sits on it |
// | pre-LN | x = x + f(LN(x)) | untouched from the embedding to the last LN |
// | none | x = x + f(x) | untouched, and nothing bounds x |
//
// `ag::TransformerBlock` (nn/transformer.h) builds all three from the same
// weights; its attention is lesson 09's (causal, 4 heads, scaled by $\sqrt{d}$),
// and lesson 13 builds the whole GPT step by step. We look at the derivative first (one block, then a deep stack),
// then at the gradient each layer of a 12-block GPT gets at initialisation,
// then at short training runs.

// %%
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "autograd/rng.h"
#include "data/text.h"
#include "nn/gpt.h"
#include "nn/optim.h"
#include "notebooks/notebook.h"
#include "ops/ops.h"

using ag::Placement;
using ag::Tape;
using ag::Var;

const Placement kPlacements[] = {Placement::Post, Placement::Pre, Placement::None};

// The Jacobian of y = F(x) at x, one row per output element (column-major
// order, as arma::vectorise), each row from one backward pass on a fresh tape.
arma::mat jacobian(const std::function<Var(Var)>& F, const arma::mat& x) {
  arma::mat J;
  for (arma::uword i = 0; i == 0 || i < J.n_rows; ++i) {
    Tape tape;
    Var v = tape.leaf(x, "x");
    Var y = F(v);
    if (i == 0) J.set_size(y.value().n_elem, x.n_elem);  // the first pass tells the output's size
    arma::mat unit(arma::size(y.value()), arma::fill::zeros);
    unit(i) = 1;
    tape.backward(y, unit);
    J.row(i) = arma::vectorise(v.grad()).t();
  }
  return J;
}

// %% [markdown]
// ## GELU, the feed-forward's activation
//
// ReLU passes a positive input and zeroes a negative one, so its derivative
// jumps from 0 to 1 at 0 and is 0 for every negative input. GELU (Hendrycks and
// Gimpel 2016) weights the input by the probability that a standard normal
// falls below it, $\mathrm{GELU}(x) = x \, \Phi(x)$: almost ReLU once $|x|$ is a few
// units, smooth at 0 with slope $\Phi(0) = 1/2$, and slightly negative for
// negative x, with a minimum where $\Phi(x) + x \, \phi(x) = 0$. GPT-2 computes
// it with a tanh approximation, and so does ops/gelu.h:
//
// $$\mathrm{GELU}(x) \approx \tfrac{1}{2} x \left(1 + \tanh\!\left(\sqrt{2/\pi}\,(x + 0.044715\, x^3)\right)\right).$$
//
// Below, the exact $x \, \Phi(x)$ (through `erfc`) against `ag::gelu` on a grid
// of 1201 points from -6 to 6, the op's minimum, and its slope at 0 from the tape.

// %%
NB_CELL {
  const arma::vec grid = arma::linspace(-6, 6, 1201);
  arma::vec exact(grid.n_elem);
  for (arma::uword i = 0; i < grid.n_elem; ++i) exact(i) = 0.5 * grid(i) * std::erfc(-grid(i) / std::sqrt(2.0));
  Tape tape;
  Var x = tape.leaf(arma::mat(grid), "x");
  Var y = ag::gelu(x);
  tape.backward(ag::sum(y));  // y's elements are independent: the gradient is GELU'(x) at each x
  const arma::vec approx = arma::vectorise(y.value()), slope = arma::vectorise(x.grad());
  const arma::uword lowest = approx.index_min();
  Tape at_zero;
  Var zero = at_zero.leaf(0.0, "x");
  at_zero.backward(ag::gelu(zero));
  const double worst = arma::abs(approx - exact).max();
  std::printf("largest |tanh approximation - x Phi(x)| on [-6, 6]: %.2g\n", worst);
  std::printf("minimum of ag::gelu on the grid: %.4f at x = %.2f; slope at 0: %.17g; gelu(6) = %.6f\n",
              approx(lowest), grid(lowest), zero.grad()(0), approx(grid.n_elem - 1));
  nb::check(worst < 1e-3, "the tanh approximation is within 1e-3 of x Phi(x) on [-6, 6]");
  nb::check(approx(lowest) > -0.18 && approx(lowest) < -0.16 && grid(lowest) > -0.8 && grid(lowest) < -0.7,
            "GELU's minimum is about -0.17, near x = -0.75");
  nb::check_close("GELU's slope at 0 is 1/2", zero.grad()(0), 0.5, 1e-15);
  std::printf("slope at x = %.2f: %.4f (ReLU's: 0)\n", grid(400), slope(400));
  nb::check(slope(400) < -0.05, "at x = -2 GELU's slope is below -0.05: a gradient where ReLU has none");
  nb::draw(nb::Plot{"gelu", "GELU against ReLU", "x", "y", false, false, {}, {"set key inside top left"}}
               .add("GELU (tanh approximation)", std::vector<double>(grid.begin(), grid.end()),
                    std::vector<double>(approx.begin(), approx.end()))
               .add("ReLU", {-6, 0, 6}, {0, 0, 6}, "lines dt 2"));
}

// %% [markdown]
// Unlike ReLU, GELU passes a gradient for negative inputs (at -2 it is
// negative, printed above), so a unit whose input is negative for every sample
// still learns; the price is an erf (or a tanh) where ReLU has a comparison.
//
// ## One sublayer: the Jacobian of f(x) and of x + f(x)
//
// Backward through a layer multiplies the incoming gradient by the layer's
// Jacobian (transposed). For y = x + f(x) that Jacobian is I + J_f: the
// identity is a path on which the gradient passes through unchanged, whatever
// J_f does. It is not a guarantee that no direction shrinks: J_f is added to
// I, and where J_f points against the identity, I + J_f is smaller than 1.
// We take one attention sublayer and one FFN (width 16, 4 heads, the
// project's Xavier initialisation: uniform in $\pm\sqrt{6 / (\mathit{fan\_in} + \mathit{fan\_out})}$,
// variance 2 / (fan_in + fan_out), Glorot and Bengio 2010's compromise
// between keeping the forward and the backward variance at 1) on a sequence
// of 4 tokens with unit
// variance, and compute both Jacobians (64 x 64) with the tape, one backward
// pass per output element.

// %%
const arma::uword kWidth = 16, kHeads = 4, kTokens = 4;
ag::Rng module_rng(9);
ag::CausalSelfAttention attention("attn", kWidth, kHeads, ag::Impl::Fused, module_rng);
ag::FeedForward ffn("ffn", kWidth, module_rng);
const arma::mat x0 = ag::Rng(10).normal(kTokens, kWidth, 1.0);

void print_spectrum(const std::string& name, const arma::vec& s) {
  std::printf("%-28s largest %10.4g   median %10.4g   smallest %10.3g\n", name.c_str(), s.max(), arma::median(s), s.min());
}

NB_CELL {
  const arma::mat J_attn = jacobian([](Var x) { return attention(x); }, x0);
  const arma::mat J_ffn = jacobian([](Var x) { return ffn(x); }, x0);
  const arma::mat I = arma::eye(arma::size(J_attn));
  const arma::mat J_attn_res = jacobian([](Var x) { return x + attention(x); }, x0);
  nb::check_close("the tape's Jacobian of x + attn(x) is I + J_attn", J_attn_res, arma::mat(I + J_attn), 1e-12);
  std::printf("singular values of the 64 x 64 Jacobians:\n");
  print_spectrum("attention alone, J_attn", arma::svd(J_attn));
  print_spectrum("x + attention, I + J_attn", arma::svd(I + J_attn));
  print_spectrum("FFN alone, J_ffn", arma::svd(J_ffn));
  print_spectrum("x + FFN, I + J_ffn", arma::svd(I + J_ffn));
  nb::check(arma::svd(J_attn).max() > 1, "attention alone is not a contraction: its largest singular value is above 1");
  nb::check(arma::svd(arma::mat(I + J_attn)).min() < 0.5, "with the residual some direction still shrinks: smallest below 0.5");
  for (const arma::mat* J : {&J_attn, &J_ffn}) {
    const std::string name = J == &J_attn ? "attention" : "FFN";
    nb::check(arma::median(arma::svd(*J)) < 0.5, name + " alone: the median singular value is below 0.5");
    const double median = arma::median(arma::svd(I + *J));
    nb::check(median > 0.9 && median < 1.2, name + " with the residual: the median singular value is within 0.9 to 1.2");
  }
}

// %% [markdown]
// ## A stack of 12 blocks
//
// Through L blocks the Jacobians multiply. Without residuals that is a product
// of L matrices like J_ffn J_attn. They are not contractions (J_attn's largest
// singular value is 1.88, above), but most of their singular values are small
// (medians 0.2 and 0.3), and a product of such factors shrinks almost every
// direction geometrically. With residuals it is a product of (I + J) factors,
// whose medians sit near 1. We build
// 12 blocks of width 16 four ways from the same weights: attention and FFN
// chained without residuals, and `TransformerBlock` with placement none, pre
// and post (LayerNorm, $\gamma = 1$ and $\beta = 0$ as at initialisation), and
// compare the singular values of the whole stack's 64 x 64 Jacobian.

// %%
const arma::uword kStack = 12;

struct Stack {
  std::vector<std::unique_ptr<ag::CausalSelfAttention>> attn;
  std::vector<std::unique_ptr<ag::FeedForward>> ffn;
  std::vector<std::unique_ptr<ag::TransformerBlock>> blocks;
};

// `TransformerBlock` draws its attention, then its FFN, from rng: the bare
// modules drawn in the same order from the same seed get the same weights.
Stack make_stack(Placement placement, bool bare) {
  ag::Rng rng(12);
  Stack s;
  for (arma::uword l = 0; l < kStack; ++l) {
    const std::string name = "h" + std::to_string(l);
    if (bare) {
      s.attn.push_back(std::make_unique<ag::CausalSelfAttention>(name + ".attn", kWidth, kHeads, ag::Impl::Fused, rng));
      s.ffn.push_back(std::make_unique<ag::FeedForward>(name + ".ffn", kWidth, rng));
    } else {
      ag::BlockSpec spec;
      spec.width = kWidth, spec.heads = kHeads, spec.placement = placement, spec.impl = ag::Impl::Fused;
      s.blocks.push_back(std::make_unique<ag::TransformerBlock>(name, spec, rng));
    }
  }
  return s;
}

Var run_stack(Stack& s, Var x) {
  for (auto& block : s.blocks) x = block->forward(x);
  for (arma::uword l = 0; l < s.attn.size(); ++l) x = s.ffn[l]->forward(s.attn[l]->forward(x));
  return x;
}

NB_CELL {
  struct Case {
    std::string name;
    Stack stack;
  };
  std::vector<Case> cases;
  cases.push_back({"no residual: ffn(attn(x))", make_stack(Placement::None, true)});
  for (Placement p : kPlacements) cases.push_back({std::string(ag::placement_name(p)) + " (TransformerBlock)", make_stack(p, false)});
  // Every singular value is drawn; those below 1e-14 of their curve's largest are rounding
  // (zero in exact arithmetic), drawn as computed, at the floor 1e-30 if exactly 0.
  nb::Plot plot{"stack_spectrum", "Singular values of the Jacobian of 12 blocks (width 16, 4 tokens)",
                "index (largest first); below 1e-14 of a curve's largest: rounding, zero in exact arithmetic",
                "singular value", false, true, {}, {"set key below horizontal", "set xrange [-1:64]"}};
  std::vector<arma::vec> spectra;
  for (Case& c : cases) {
    const arma::vec s = arma::svd(jacobian([&c](Var x) { return run_stack(c.stack, x); }, x0));
    print_spectrum(c.name, s);
    spectra.push_back(s);
    std::vector<double> index, value;
    for (arma::uword i = 0; i < s.n_elem; ++i) {
      index.push_back(double(i)), value.push_back(std::max(s(i), 1e-30));
    }
    plot.add(c.name, index, value, "linespoints pt 7 ps 0.5");
  }
  nb::draw(plot);
  const arma::vec &bare = spectra[0], &post = spectra[1], &pre = spectra[2], &none = spectra[3];
  const arma::uword post_null = arma::accu(post < 1e-12 * post(0));
  std::printf("post: %llu singular values below 1e-12 x the largest\n", (unsigned long long)post_null);
  std::printf("post, 12 blocks: the 8 smallest singular values / the largest:");
  for (arma::uword i = post.n_elem - 8; i < post.n_elem; ++i) std::printf(" %.2g", post(i) / post(0));
  std::printf("\n");
  // One post-LN block (two LayerNorms): which of the small singular values are exact zeros?
  ag::Rng one_rng(12);
  ag::BlockSpec spec;
  spec.width = kWidth, spec.heads = kHeads, spec.placement = Placement::Post, spec.impl = ag::Impl::Fused;
  ag::TransformerBlock one("b", spec, one_rng);
  const arma::vec s1 = arma::svd(jacobian([&one](Var x) { return one(x); }, x0));
  std::printf("post, 1 block:   the 8 smallest singular values / the largest:");
  for (arma::uword i = s1.n_elem - 8; i < s1.n_elem; ++i) std::printf(" %.2g", s1(i) / s1(0));
  std::printf("\n");
  const arma::uword exact = arma::accu(s1 < 1e-14 * s1(0)), small = arma::accu(s1 < 1e-6 * s1(0));
  nb::check(exact == kTokens, "one post-LN block: exactly T = 4 singular values are zero to rounding (below 1e-14 x the largest)");
  nb::check(small == 2 * kTokens, "one post-LN block: 4 more are tiny but not zero (between 1e-14 and 1e-6 x the largest)");
  nb::check(bare.max() < 1e-5, "without residuals the 12-block Jacobian has collapsed: every singular value below 1e-5");
  nb::check(arma::median(pre) > 0.5 && arma::median(pre) < 2, "pre-LN: the median singular value stays within 0.5 to 2");
  nb::check(pre.min() > 0.01, "pre-LN: no direction is lost (smallest singular value above 0.01)");
  nb::check(post_null >= kTokens, "post-LN: each LayerNorm removes every token's mean direction (>= 4 zero singular values)");
  nb::check(arma::median(post) < 0.1, "post-LN: the median singular value falls below 0.1");
  nb::check(none.max() > 100, "none: nothing bounds the stream, the largest singular value exceeds 100");
}

// %% [markdown]
// ## The gradient each layer gets at initialisation
//
// Now a real model: a character-level GPT (nn/gpt.h) with 12 blocks of width
// 32 and 4 heads, on words from /usr/share/dict/words (data/text.h: one word
// a line, framed by the boundary token). The three placements start from the
// same weights (`ag::Gpt` draws them in a fixed order). One batch of 64 words,
// the cross-entropy of every next character, one backward pass, and for each
// block the norm of the gradient of its four weight matrices (attention's qkv
// and proj, the FFN's fc and proj: what the three placements share).

// %%
using Batch = ag::SequenceBatch;

const ag::TextData words = ag::load_words();
ag::Rng split_rng(3);
const ag::TextSplit split = ag::split_lines(words, 0.1, split_rng);
const std::vector<ag::Sequence> train_seqs = ag::make_sequences(split.train, 32);
const std::vector<ag::Sequence> val_seqs = ag::make_sequences(split.validation, 32);

ag::GptSpec gpt_spec(Placement placement, arma::uword layers) {
  ag::GptSpec spec;
  spec.vocab = words.vocab.size(), spec.context = 32, spec.layers = layers;
  spec.block.width = 32, spec.block.heads = 4, spec.block.placement = placement, spec.block.impl = ag::Impl::Fused;
  return spec;
}

// Norm of the gradient of block l's weight matrices, l = 0 (next to the embedding) .. layers - 1.
std::vector<double> block_gradient_norms(ag::Gpt& model, arma::uword layers) {
  std::vector<double> sq(layers, 0.0);
  for (ag::Parameter* p : model.parameters()) {
    const std::string& n = p->name();
    const bool in_block = n.size() > 8 && n[0] == 'h' && std::isdigit(static_cast<unsigned char>(n[1]));  // not "head."
    if (!in_block || n.compare(n.size() - 7, 7, ".weight") != 0) continue;
    sq[std::stoul(n.substr(1, n.find('.') - 1))] += arma::accu(arma::square(p->grad()));
  }
  for (double& s : sq) s = std::sqrt(s);
  return sq;
}

NB_CELL {
  const Batch batch = ag::gather_sequences(train_seqs, 0, 64);
  nb::Plot plot{"gradient_norms", "Gradient norm of each block's weights at initialisation, 12-block GPT",
                "block (0 = next to the embedding)", "|dloss / dW| of the block", false, true, {}, {"set key top right"}};
  std::vector<std::vector<double>> norms;
  std::printf("%-6s", "block");
  for (Placement p : kPlacements) std::printf(" %12s", ag::placement_name(p));
  std::printf("\n");
  for (Placement p : kPlacements) {
    ag::Rng rng(1);
    ag::Gpt model(gpt_spec(p, kStack), rng);
    Tape tape;
    tape.backward(ag::softmax_cross_entropy(model.logits(tape, batch.input, batch.lengths), batch.target));
    norms.push_back(block_gradient_norms(model, kStack));
  }
  std::vector<double> layer;
  for (arma::uword l = 0; l < kStack; ++l) {
    layer.push_back(double(l));
    std::printf("%-6llu %12.4g %12.4g %12.4g\n", (unsigned long long)l, norms[0][l], norms[1][l], norms[2][l]);
  }
  for (std::size_t k = 0; k < 3; ++k) plot.add(ag::placement_name(kPlacements[k]), layer, norms[k], "linespoints pt 7");
  nb::draw(plot);
  const std::vector<double> &post = norms[0], &pre = norms[1], &none = norms[2];
  const arma::uword last = kStack - 1;
  const auto [post_min, post_max] = std::minmax_element(post.begin(), post.end());
  nb::check(post[0] < pre[0] / 4, "block 0: post-LN's gradient is under a quarter of pre-LN's");
  nb::check(*post_max < 1.3 * *post_min, "post-LN: every block's gradient is within 1.3x of every other's");
  nb::check(pre[0] > 1.5 * pre[last], "pre-LN: the first block's gradient is over 1.5x the last's (it grows towards the input)");
  nb::check(*std::max_element(none.begin(), none.end()) < *post_min, "none: every block's gradient is below post-LN's smallest");
}

// %% [markdown]
// ## The first loss, and what the initialisation does to it
//
// An untrained model should be unsure: every token about equally likely, a
// loss of $\log 27 = 3.30$ nats (makemore part 3's first check). `ag::Gpt` is
// initialised for that (nn/gpt.cpp): the head's weights are scaled by 0.1, so
// the first logits are near 0, and the two projections of each block that
// write into the residual stream are scaled by $1/\sqrt{2 \times 12}$ as in GPT-2
// (Radford et al. 2019, sec. 2.3: "scale the weights of residual layers at
// initialization by a factor of 1/sqrt(N) where N is the number of residual
// layers"), so
// the 24 terms the blocks add to the stream do not grow it with depth. Below,
// the first loss on the batch above with each of the two scalings undone. (Any
// training run reports the same check as its first metrics row, step 0, the
// loss before any step; lesson 15 reads it there.)

// %%
bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

double loss_on(ag::Gpt& model, const Batch& b) {
  Tape tape;
  ag::NoGrad no_grad(tape);
  return ag::softmax_cross_entropy(model.logits(tape, b.input, b.lengths), b.target).item();
}

// Multiplies the head's weights by `head` and the residual projections' by `residual`
// (10 and sqrt(2 layers) undo nn/gpt.cpp's two scalings).
void rescale(ag::Gpt& model, double head, double residual) {
  for (ag::Parameter* q : model.parameters()) {
    if (q->name() == "head.weight") q->mutable_value() *= head;
    if (ends_with(q->name(), ".attn.proj.weight") || ends_with(q->name(), ".ffn.proj.weight")) q->mutable_value() *= residual;
  }
}

// The untrained 12-block GPT's loss on b, rescaled.
double first_loss(Placement p, double head, double residual, const Batch& b) {
  ag::Rng rng(1);
  ag::Gpt model(gpt_spec(p, kStack), rng);
  rescale(model, head, residual);
  return loss_on(model, b);
}

// How large the old init's first logits are (no norm), and the cross-entropy that
// independent normal logits of the same sd would give, by Monte Carlo.
void print_old_init_logits(const Batch& b) {
  ag::Rng rng(1);
  ag::Gpt model(gpt_spec(Placement::None, kStack), rng);
  rescale(model, 10, std::sqrt(2.0 * kStack));
  Tape tape;
  ag::NoGrad no_grad(tape);
  const arma::mat logits = model.logits(tape, b.input, b.lengths).value();
  const double sd = arma::stddev(arma::vectorise(logits));
  const arma::mat z = ag::Rng(7).normal(20000, 27, sd);
  const arma::vec top = arma::max(z, 1);
  const arma::vec lse = top + arma::log(arma::sum(arma::exp(z.each_col() - top), 1));
  std::printf("none, the old init: first logits' sd %.2f; i.i.d. normal logits of that sd over 27 classes "
              "give a cross-entropy of %.1f nats on average\n", sd, arma::mean(lse - z.col(0)));
}

NB_CELL {
  const Batch batch = ag::gather_sequences(train_seqs, 0, 64);
  const double undo_residual = std::sqrt(2.0 * kStack), log27 = std::log(27.0);
  std::printf("first loss (log 27 = %.4f)   as initialised   head x 10   residual x sqrt(24)   both (the old init)\n", log27);
  std::vector<std::vector<double>> table;
  for (Placement p : kPlacements) {
    table.push_back({first_loss(p, 1, 1, batch), first_loss(p, 10, 1, batch), first_loss(p, 1, undo_residual, batch),
                     first_loss(p, 10, undo_residual, batch)});
    std::printf("%-5s %22.4f %16.4f %21.4f %20.4f\n", ag::placement_name(p), table.back()[0], table.back()[1],
                table.back()[2], table.back()[3]);
  }
  for (const std::vector<double>& row : table) {
    nb::check(std::abs(row[0] - log27) < 0.05, "as initialised, every placement's first loss is within 0.05 of log 27");
  }
  const std::vector<double> &post = table[0], &pre = table[1], &none = table[2];
  nb::check(none[3] > 4 * pre[3], "the old init: none's first loss is over 4x pre-LN's");
  nb::check(none[1] < log27 + 0.1 && none[2] < log27 + 0.25,
            "none: either scaling alone keeps the first loss within 0.25 of log 27");
  nb::check(none[3] > 4 * std::max(none[1], none[2]), "none: the two undone together give over 4x either alone");
  nb::check(pre[2] < log27 + 0.05, "pre-LN, residual unscaled: the first loss stays within 0.05 of log 27");
  nb::check(post[1] > log27 + 0.4 && pre[1] > log27 + 0.4, "post and pre, the head x 10: over 0.4 nats above log 27");
  print_old_init_logits(batch);
}

// %% [markdown]
// ## Gradient clipping
//
// A gradient is a linear picture of the loss near the weights. Where the loss
// has a cliff (Pascanu et al. 2013 met them in recurrent networks, whose
// gradients can explode), one step along a huge gradient jumps far outside the
// region where that picture holds, and undoes the training so far. Clipping
// by norm bounds the step and keeps its direction: treat the gradients of all
// parameters as one vector g, and if $\lVert g \rVert > c$ multiply every one of
// them by $c / \lVert g \rVert$ (`ag::clip_grad_norm`, as PyTorch's `clip_grad_norm_`,
// divides by $\lVert g \rVert + 10^{-6}$). Below, two parameters whose gradients
// together have norm 13, clipped to 1, then to 20.

// %%
NB_CELL {
  ag::Parameter a("a", arma::mat(1, 2, arma::fill::zeros)), b("b", arma::mat(1, 1, arma::fill::zeros));
  a.mutable_grad() = arma::mat{{3, 4}};
  b.mutable_grad() = arma::mat(1, 1, arma::fill::value(12.0));
  const arma::vec before = arma::join_cols(arma::vectorise(a.grad()), arma::vectorise(b.grad()));
  const double norm = ag::clip_grad_norm({&a, &b}, 1.0);
  const arma::vec after = arma::join_cols(arma::vectorise(a.grad()), arma::vectorise(b.grad()));
  const double cosine = arma::dot(before, after) / (arma::norm(before) * arma::norm(after));
  std::printf("norm before %.17g, after %.17g; cosine between the two %.17g\n", norm, arma::norm(after), cosine);
  nb::check_close("the joint norm of the two gradients is 13", norm, 13.0, 1e-15);
  nb::check_close("clipped to 1: the joint norm becomes 13 / (13 + 1e-6)", arma::norm(after), 13 / (13 + 1e-6), 1e-15);
  nb::check_close("the direction is kept (cosine 1)", cosine, 1.0, 1e-15);
  const arma::vec kept = after;
  ag::clip_grad_norm({&a, &b}, 20.0);
  nb::check(arma::approx_equal(arma::join_cols(arma::vectorise(a.grad()), arma::vectorise(b.grad())), kept, "absdiff", 0),
            "a gradient already under the bound is left as it is");
}

// %% [markdown]
// ## Short training runs
//
// The same 12-block GPT, each placement from the same weights and the same
// batches: Adam at a constant learning rate of 1e-3 with no warm-up (the
// setting in which Xiong et al. 2020 say post-LN needs a warm-up; lesson 12
// writes a warm-up and measures it), the gradient norm clipped to 1 (the
// section above), 60 steps of 8 words. Then post-LN and pre-LN
// again without clipping, and post-LN with a linear warm-up over 50 steps (a warm-up starts the
// rate small and raises it to its value over the first steps, here from lr/50 at step 1 by lr/50 a
// step to lr at step 50, so the first updates, taken while Adam's moment estimates are still
// rough, stay small). The curve is the training
// loss averaged over 10 steps; the dashed line is the count bigram on the
// same validation words, the baseline a language model has to beat.

// %%
const int kSteps = 60;
const std::size_t kBatch = 8;

struct Run {
  std::vector<double> loss;  // per step
  double val = 0;            // on the first 256 validation words, after training
};

Run train_placement(Placement p, double clip = 1.0, int warmup = 0, bool old_init = false) {
  ag::Rng rng(1);
  ag::Gpt model(gpt_spec(p, kStack), rng);
  if (old_init) rescale(model, 10, std::sqrt(2.0 * kStack));
  ag::AdamOptions options;
  options.lr = 1e-3;
  ag::Adam adam(model.parameters(), options);
  Run run;
  Tape tape;
  for (int step = 0; step < kSteps; ++step) {
    const Batch b = ag::gather_sequences(train_seqs, std::size_t(step) * kBatch, kBatch);
    tape.clear();
    adam.zero_grad();
    Var loss = ag::softmax_cross_entropy(model.logits(tape, b.input, b.lengths), b.target);
    tape.backward(loss);
    if (clip > 0) ag::clip_grad_norm(model.parameters(), clip);
    if (warmup > 0) adam.set_lr(options.lr * std::min(1.0, (step + 1.0) / warmup));
    adam.step();
    run.loss.push_back(loss.item());
  }
  run.val = loss_on(model, ag::gather_sequences(val_seqs, 0, 256));
  return run;
}

NB_CELL {
  const ag::Bigram bigram = ag::fit_bigram(train_seqs, words.vocab.size());
  const std::vector<ag::Sequence> val256(val_seqs.begin(), val_seqs.begin() + 256);
  const double baseline = bigram.loss(val256);
  nb::Plot plot{"training", "12-block GPT on words, Adam lr 1e-3, no warm-up", "step",
                "training loss (nats per character, mean of 10 steps)", false, false, {}, {"set key top right"}};
  std::vector<Run> runs;
  for (Placement p : kPlacements) {
    const auto start = std::chrono::steady_clock::now();
    runs.push_back(train_placement(p));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::vector<double> x, y;
    for (int s = 9; s < kSteps; ++s) {
      x.push_back(s + 1);
      y.push_back(std::accumulate(runs.back().loss.begin() + s - 9, runs.back().loss.begin() + s + 1, 0.0) / 10);
    }
    std::printf("%-5s first loss %.4f, mean of the last 10 steps %.4f, validation %.4f  (%.1f s)\n",
                ag::placement_name(p), runs.back().loss.front(), y.back(), runs.back().val, seconds);
    plot.add(ag::placement_name(p), x, y);
  }
  std::printf("bigram baseline on the same validation words: %.4f; uniform over %llu tokens: %.4f\n", baseline,
              (unsigned long long)words.vocab.size(), std::log(double(words.vocab.size())));
  plot.add("bigram (validation)", {10.0, double(kSteps)}, {baseline, baseline}, "lines dt 2 lw 2");
  nb::draw(plot);
  const Run &post = runs[0], &pre = runs[1], &none = runs[2];
  for (const Run* r : {&post, &pre, &none}) {
    nb::check(r->val < std::log(27.0) - 0.4, "every placement ends over 0.4 nats below the uniform guess");
    nb::check(r->val > baseline, "no placement reaches the bigram in 60 steps");
  }
  const double spread = std::max({post.val, pre.val, none.val}) - std::min({post.val, pre.val, none.val});
  std::printf("spread of the three validation losses: %.3f\n", spread);
  nb::check(spread < 0.1, "the three validation losses lie within 0.1 nats of each other");
  const Run post_free = train_placement(Placement::Post, 0), pre_free = train_placement(Placement::Pre, 0);
  const Run post_warm = train_placement(Placement::Post, 1.0, 50);
  std::printf("without clipping: post validation %.4f, pre %.4f; post - pre %.4f (clipped: %.4f)\n", post_free.val,
              pre_free.val, post_free.val - pre_free.val, post.val - pre.val);
  std::printf("post-LN with a 50-step warm-up: validation %.4f (without: %.4f)\n", post_warm.val, post.val);
  nb::check(std::abs((post_free.val - pre_free.val) - (post.val - pre.val)) < 0.03,
            "without clipping the post - pre gap moves by under 0.03 nats");
  nb::check(post_warm.val > post.val, "in 60 steps post-LN with a 50-step warm-up ends above post-LN without");
  std::vector<Run> old;
  for (Placement p : kPlacements) old.push_back(train_placement(p, 1.0, 0, true));
  std::printf("the old init (head x 10, residual x sqrt(24)): post %.4f, pre %.4f, none %.4f; first loss of none %.2f\n",
              old[0].val, old[1].val, old[2].val, old[2].loss.front());
  nb::check(old[0].val > old[1].val + 0.05, "with the old init, post-LN ends over 0.05 nats behind pre-LN");
  nb::check(std::abs(post.val - pre.val) < 0.03, "with the init of nn/gpt.cpp, post-LN and pre-LN end within 0.03 nats");
}

// %% [markdown]
// What the measurements say, for this model at initialisation:
//
// - **Residuals keep the derivative alive.** One sublayer alone shrinks most
//   directions (median singular value 0.2 to 0.3, though attention's largest
//   is 1.9); with the residual the median is about 1, and the smallest is still
//   0.13: the identity adds a path, it does not make every direction pass.
//   Twelve blocks without residuals multiply those factors into a Jacobian
//   whose largest singular value is 3e-7: no gradient would reach the embedding.
// - **Pre-LN** leaves the residual path alone: the 12-block Jacobian keeps
//   every direction (singular values from 0.03 to 7, median 0.9), and the
//   gradient each block gets is largest next to the embedding and falls
//   towards the output (0.21 down to 0.12), because every block adds its
//   gradient to the stream on the way back.
// - **Post-LN** puts a LayerNorm on the residual path after every sublayer.
//   Each one divides by the standard deviation of x + f(x), above 1 when f
//   adds variance to an already normalised x, and removes each token's mean
//   direction: the Jacobian's median singular value is 0.02, and T = 4
//   directions are lost exactly. Each LayerNorm also shrinks each token's
//   scale direction (along xhat) by eps / (var + eps), lesson 04's second
//   eigenvalue: about 1e-5 for a variance near 1. A post-LN block has two
//   LayerNorms, one after each sublayer, and their factors multiply: about
//   1e-10, times what the rest of the block does, so one block leaves those 4
//   at about 2e-11 of the largest, not zero. After 24 LayerNorms they have
//   sunk into rounding too. Post-LN's
//   block gradients are under a quarter of pre-LN's at block 0 (0.047 against
//   0.21), and flat across the blocks (0.041 to 0.049).
// - **The literature.** Xiong et al. (2020, "On Layer Normalization in the
//   Transformer Architecture") show that at initialisation post-LN's gradients
//   are large for the parameters near the output, which makes a large
//   learning rate unstable without a warm-up, and that pre-LN's gradient norm
//   stays about the same across layers ("well-behaved"). The vanishing account,
//   post-LN's first layers getting the smallest gradients, is Liu et al.
//   (2020, "Understanding the Difficulty of Training Transformers"), who add
//   that vanishing gradients alone do not explain post-LN's instability (they
//   blame how strongly each layer depends on its residual branch). This small
//   model does not fit either picture exactly: pre-LN's gradient falls by 1.9x
//   from the first block to the last, which is not "the same across layers",
//   and post-LN's is flat here.
// - **None** has residuals but nothing bounds the stream: the stack's Jacobian
//   has a singular value of 860. Its first loss of 19 nats with the old
//   initialisation needed two things together: the residual stream growing
//   over 24 unscaled sublayers, and a full-size head reading it with no final
//   norm. Undo either scaling alone and the first loss stays within 0.25 of
//   log 27; undo both and it is 17.6 (table above). Pre-LN with the same
//   unscaled residuals stays at log 27, because its final norm rescales the
//   stream before the head. Seed 002's "explode or vanish" is right about the
//   stacks above: with residuals and no norm the Jacobian explodes; without
//   residuals it vanishes.
//
// In 60 short steps all three learn, and none of them reaches the count
// bigram (2.48), the baseline a language model has to beat: 60 steps of 8
// words are the start of training, not its end. With the initialisation of
// nn/gpt.cpp post-LN and pre-LN end level (2.769 and 2.775) and the model
// without norms a little ahead (2.727); with the old initialisation post-LN
// ended 0.11 behind pre-LN (2.804 against 2.693). Clipping is not what closes
// or opens the gap: without it post - pre moves from -0.006 to -0.011. A
// 50-step warm-up makes post-LN end higher here (2.891), because it spends most
// of so short a run at small rates. These are one seed and a few seconds of
// training: the curves show the start of training, not which placement wins
// in the end.
//
// ## What to remember
//
// - A residual connection makes a block's Jacobian I + J_f: the identity carries the gradient past every block.
// - Pre-LN (GPT-2) keeps the residual path free of norms; post-LN (seed 000's "after adding the Residual
//   Connection", the original Transformer) normalises on it, which removes T directions exactly and shrinks
//   the first layers' gradient below pre-LN's.
// - Without any norm nothing bounds the residual stream; an initialisation that scales the residual
//   projections and the head keeps the first loss at log V anyway, but not the stream's Jacobian.
// - Measure before believing a story about depth: the singular values and the per-layer gradient norms
//   are a few lines of code with the tape, and what they show depends on the initialisation.

// %% [markdown]
// ## Exercises
//
// 1. (medium) Show that for post-LN, y = LN(x + f(x)), the Jacobian is J_LN (I + J_f),
//    and use lesson 04's form of J_LN to explain why the product over many
//    blocks has at least one zero singular value per token. Check it with
//    `jacobian` on one block.
// 2. (medium) Repeat the gradient-norm measurement with 24 blocks. How do post-LN's
//    first and last blocks compare now, and pre-LN's?
// 3. (medium) The lesson gives post-LN a linear warm-up over 50 steps
//    (`train_placement(Placement::Post, 1.0, 50)`), and it ends higher after
//    60 steps. Why, in so short a run? Why should a warm-up help in general a
//    model whose gradients are uneven across layers, trained with Adam?
// 4. (hard) With the old initialisation the "none" model starts with a loss of 19
//    nats. Where does the scale come from? Measure the standard deviation of
//    the residual stream after each block, with and without the
//    $1/\sqrt{2 \cdot \text{layers}}$ scaling, and relate it to the number of blocks.
// 5. (medium) `ag::Gpt` ends both placements with a final LayerNorm `norm_f` before
//    the head. In post-LN the last block already ends with a LayerNorm: what
//    does a second one in a row change ($\gamma = 1$, $\beta = 0$)? Why does pre-LN
//    need it, and what would the logits of a pre-LN GPT without it look like?
