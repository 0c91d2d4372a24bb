// %% [markdown]
// # Lesson 09: residual connections, and where LayerNorm sits
//
// A transformer block has two sublayers, attention and a feed-forward network
// (FFN), and each is wrapped in a residual connection: the block adds the
// sublayer's output to its input instead of replacing it. Where the norm
// goes is the subject of this lesson. The seeds put it in two places: seed 000
// normalises the matrix it gets "after adding the Residual Connection" (post-LN,
// the original Transformer of Vaswani et al. 2017), and seed 002 says LayerNorm
// appears "before and/or after every Attention and FFN layer", because without
// it "activations in deep networks would explode or vanish". GPT-2 puts it
// before (pre-LN):
//
// | placement | one sublayer f | the residual path |
// |---|---|---|
// | post-LN | x = LN(x + f(x)) | every LayerNorm sits on it |
// | pre-LN | x = x + f(LN(x)) | untouched from the embedding to the last LN |
// | none | x = x + f(x) | untouched, and nothing bounds x |
//
// `ag::TransformerBlock` (nn/transformer.h) builds all three from the same
// weights. We look at the derivative first (one block, then a deep stack),
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
// ## One sublayer: the Jacobian of f(x) and of x + f(x)
//
// Backward through a layer multiplies the incoming gradient by the layer's
// Jacobian (transposed). For y = x + f(x) that Jacobian is I + J_f: whatever
// J_f does, the identity passes the gradient through unchanged, and J_f only
// adds to it. We take one attention sublayer and one FFN (width 16, 4 heads,
// the project's Xavier initialisation) on a sequence of 4 tokens with unit
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
// of L matrices like J_ffn J_attn, and a product of contractions shrinks
// geometrically. With residuals it is a product of (I + J) factors. We build
// 12 blocks of width 16 four ways from the same weights: attention and FFN
// chained without residuals, and `TransformerBlock` with placement none, pre
// and post (LayerNorm, gamma = 1 and beta = 0 as at initialisation), and
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
  nb::Plot plot{"stack_spectrum", "Singular values of the Jacobian of 12 blocks (width 16, 4 tokens)",
                "index (largest first)", "singular value", false, true, {}, {"set key bottom left"}};
  std::vector<arma::vec> spectra;
  for (Case& c : cases) {
    const arma::vec s = arma::svd(jacobian([&c](Var x) { return run_stack(c.stack, x); }, x0));
    print_spectrum(c.name, s);
    spectra.push_back(s);
    std::vector<double> index, value;
    for (arma::uword i = 0; i < s.n_elem; ++i) {
      if (s(i) > 1e-14 * s(0)) index.push_back(double(i)), value.push_back(s(i));
    }
    plot.add(c.name, index, value, "linespoints pt 7 ps 0.5");
  }
  nb::draw(plot);
  const arma::vec &bare = spectra[0], &post = spectra[1], &pre = spectra[2], &none = spectra[3];
  const arma::uword post_null = arma::accu(post < 1e-12 * post(0));
  std::printf("post: %llu singular values below 1e-12 x the largest\n", (unsigned long long)post_null);
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
  nb::check(post[0] < pre[0] / 2, "block 0: post-LN's gradient is under half of pre-LN's");
  nb::check(post[last] > 1.5 * post[0], "post-LN: the last block's gradient is over 1.5x the first's (it grows towards the output)");
  nb::check(pre[0] > 2 * pre[last], "pre-LN: the first block's gradient is over 2x the last's (it grows towards the input)");
  nb::check(*std::min_element(none.begin(), none.end()) > 10 * *std::max_element(pre.begin(), pre.end()),
            "none: every block's gradient is over 10x the largest of pre-LN's");
}

// %% [markdown]
// ## Short training runs
//
// The same 12-block GPT, each placement from the same weights and the same
// batches: Adam at a constant learning rate of 1e-3 with no warm-up (the
// setting in which post-LN is known to struggle, Xiong et al. 2020), the
// gradient norm clipped to 1, 60 steps of 8 words. The curve is the training
// loss averaged over 10 steps; the dashed line is the count bigram on the
// same validation words, the baseline a language model has to beat.

// %%
const int kSteps = 60;
const std::size_t kBatch = 8;

struct Run {
  std::vector<double> loss;  // per step
  double val = 0;            // on the first 256 validation words, after training
};

double mean_loss(ag::Gpt& model, const Batch& b) {
  Tape tape;
  ag::NoGrad no_grad(tape);
  return ag::softmax_cross_entropy(model.logits(tape, b.input, b.lengths), b.target).item();
}

Run train_placement(Placement p) {
  ag::Rng rng(1);
  ag::Gpt model(gpt_spec(p, kStack), rng);
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
    ag::clip_grad_norm(model.parameters(), 1.0);
    adam.step();
    run.loss.push_back(loss.item());
  }
  run.val = mean_loss(model, ag::gather_sequences(val_seqs, 0, 256));
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
  nb::check(none.loss.front() > 4 * pre.loss.front(), "none: the untrained model's first loss is over 4x pre-LN's");
  for (const Run* r : {&post, &pre, &none}) {
    nb::check(r->val < std::log(27.0) - 0.4, "every placement ends over 0.4 nats below the uniform guess");
  }
  const double spread = std::max({post.val, pre.val, none.val}) - std::min({post.val, pre.val, none.val});
  std::printf("spread of the three validation losses: %.3f\n", spread);
  nb::check(post.val > pre.val, "after 60 steps without warm-up, post-LN's validation loss is above pre-LN's");
  nb::check(spread < 0.15, "the three validation losses lie within 0.15 nats of each other");
}

// %% [markdown]
// What the measurements say, for this model at initialisation:
//
// - **Residuals keep the derivative alive.** One sublayer alone shrinks most
//   directions (median singular value 0.2 to 0.3); with the residual the
//   median is about 1. Twelve blocks without residuals multiply those
//   contractions into a Jacobian whose largest singular value is 3e-7: no
//   gradient would reach the embedding.
// - **Pre-LN** leaves the residual path alone: the 12-block Jacobian keeps
//   every direction (singular values from 0.03 to 7, median 0.9), and the
//   gradient each block gets is largest next to the embedding and falls
//   towards the output (2.8 down to 0.9), because every block adds its
//   gradient to the stream on the way back.
// - **Post-LN** puts a LayerNorm on the residual path after every sublayer.
//   Each one divides by the standard deviation of x + f(x), above 1 when f
//   adds variance to an already normalised x, and removes each token's mean
//   direction, so the Jacobian's median singular value is 0.02, some
//   directions are exactly lost, and the gradient is smallest at the first
//   blocks: 0.9 against pre-LN's 2.8 at block 0, and larger towards the
//   output. Xiong et al. (2020, "On Layer Normalization in the Transformer
//   Architecture") describe the same shape and why post-LN needs a
//   learning-rate warm-up.
// - **None** has residuals but nothing bounds the stream: the logits come
//   out large (a first loss of 19 nats against about 4), the gradients are 70
//   to 115 per block, and the stack's Jacobian has a singular value of 860.
//   Seed 002's "explode or vanish" is right about this stack: with residuals
//   and no norm it explodes; without residuals it vanishes.
//
// In 60 short steps all three learn; the gradient clipping and Adam's
// per-parameter scaling absorb much of the difference: post-LN ends a little
// behind pre-LN, and the model without norms, once its first steps have
// brought its loss down from 19, ends level with pre-LN. These are one seed
// and a few seconds of training: the curves show the start of training, not
// which placement wins in the end.
//
// ## What to remember
//
// - A residual connection makes a block's Jacobian I + J_f: the identity carries the gradient past every block.
// - Pre-LN (GPT-2) keeps the residual path free of norms; post-LN (seed 000's "after adding the Residual
//   Connection", the original Transformer) normalises on it, which shrinks the gradient of the first layers.
// - Without any norm nothing bounds the residual stream: here the logits and the gradients came out large.
// - Measure before believing a story about depth: the singular values and the per-layer gradient norms
//   are a few lines of code with the tape.

// %% [markdown]
// ## Exercises
//
// 1. Show that for post-LN, y = LN(x + f(x)), the Jacobian is J_LN (I + J_f),
//    and use lesson 04's form of J_LN to explain why the product over many
//    blocks has at least one zero singular value per token. Check it with
//    `jacobian` on one block.
// 2. Repeat the gradient-norm measurement with 24 blocks. How do post-LN's
//    first and last blocks compare now, and pre-LN's?
// 3. Give post-LN a linear warm-up of the learning rate (say 50 steps from 0
//    to 1e-3) and train it again. Does it close the gap to pre-LN? Why should
//    a warm-up help a model whose gradients are uneven across layers?
// 4. The "none" model starts with a loss of 19 nats. Where does the scale come
//    from? Measure the standard deviation of the residual stream after each
//    block and relate it to the number of blocks.
// 5. `ag::Gpt` ends both placements with a final LayerNorm `norm_f` before
//    the head. In post-LN the last block already ends with a LayerNorm: what
//    does a second one in a row change (gamma = 1, beta = 0)? Why does pre-LN
//    need it, and what would the logits of a pre-LN GPT without it look like?
