// %% [markdown]
// # Lesson 13: a tiny GPT on the tape
//
// Everything a GPT computes is an op this project already has: matmul,
// transpose, a causal mask, softmax, embeddings, LayerNorm, GELU (the
// feed-forward's activation, $x \, \Phi(x)$ with $\Phi$ the normal CDF, Hendrycks and
// Gimpel 2016; lesson 10). This lesson
// builds one attention head from those primitives and checks it against the
// module `ag::CausalSelfAttention` (nn/attention.h), compares the composed
// softmax with the fused one, lists what every node of a head keeps for
// backward, and then trains a small GPT on words for a few seconds and
// samples from it. Lesson 09 measured why the scores are divided by $\sqrt{d}$,
// what heads and the causal mask do, and why positions are embedded; lesson
// 10 measured where the norms go.
//
// Rows are tokens, columns features, as everywhere in this project. For one
// sequence of T tokens and one head of width d:
//
// $$
// \begin{aligned}
// q &= x W_q, \quad k = x W_k, \quad v = x W_v && (T \times d \text{ each})
// \\ \text{scores} &= q k^T / \sqrt{d} && (T \times T)
// \\ \text{scores}_{ij} &= -\infty \text{ for } j > i && \text{(token } i \text{ may not see later tokens)}
// \\ \text{weights} &= \mathrm{softmax}(\text{scores}) \text{ along each row} && \text{(each row sums to 1)}
// \\ \text{out} &= \text{weights} \; v && (T \times d)
// \end{aligned}
// $$

// %%
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "autograd/rng.h"
#include "check/listing.h"
#include "data/text.h"
#include "nn/gpt.h"
#include "nn/optim.h"
#include "notebooks/notebook.h"
#include "ops/ops.h"
#include "train/sampling.h"

using ag::Tape;
using ag::Var;

const double kInf = std::numeric_limits<double>::infinity();
const arma::uword T = 5, d = 8;

// One head, one sequence, from primitives: the formulas above, node by node.
struct Head {
  Var weights, out;  // T x T attention weights, T x d output
};
Head attention_head(Var x, Var w_qkv, Var b_qkv, bool fused_softmax = true) {
  Var all = ag::matmul(x, w_qkv) + b_qkv;  // T x 3d: q, k, v side by side
  Var q = ag::cols(all, 0, d), k = ag::cols(all, d, d), v = ag::cols(all, 2 * d, d);
  Var scores = ag::matmul(q, ag::transpose(k)) / std::sqrt(double(d));
  Var masked = ag::masked_fill(scores, ag::causal_mask(T), -kInf);
  Var weights = fused_softmax ? ag::softmax(masked, 1) : ag::softmax_composed(masked, 1);
  return {weights, ag::matmul(weights, v)};
}

// %% [markdown]
// ## One head from primitives, against the module
//
// `CausalSelfAttention` with one head keeps Wq, Wk, Wv side by side in one
// d x 3d matrix (`qkv.weight`), then projects the head's output with
// `proj`. We feed the same parameters to `attention_head` and compare.

// %%
ag::Rng rng(4);
ag::CausalSelfAttention module("attn", d, 1, ag::Impl::Fused, rng);
const arma::mat x_in = ag::Rng(5).normal(T, d, 1.0);

NB_CELL {
  Tape tape;
  Var x = tape.leaf(x_in, "x");
  const arma::mat by_module = module(x).value();
  const Head head = attention_head(x, tape.param(module.qkv.weight), tape.param(module.qkv.bias));
  const arma::mat by_hand = (ag::matmul(head.out, tape.param(module.proj.weight)) + tape.param(module.proj.bias)).value();
  std::printf("largest difference between the module's output and the primitives': %.3g\n",
              arma::abs(by_module - by_hand).max());
  nb::check_close("attention from primitives = CausalSelfAttention with 1 head", by_hand, by_module, 1e-13);
  const arma::mat& w = head.weights.value();
  nb::show("attention weights (row i: how much token i takes from each token j)", w);
  nb::check_close("every row of the weights sums to 1", arma::mat(arma::sum(w, 1)), arma::ones(T, 1), 1e-15);
  nb::check(arma::accu(arma::trimatu(w, 1) != 0.0) == 0, "every weight above the diagonal is exactly 0 (the future)");
  nb::check(w(0, 0) == 1.0, "the first token can only look at itself: weight exactly 1");
  nb::heatmap("attention_weights", "Attention weights of one head (untrained), 5 tokens", w, "token j (looked at)",
              "token i (looking)");
}

// %% [markdown]
// ## Composed softmax against fused softmax
//
// `softmax_composed` is $\exp(x - \mathrm{logsumexp}(x))$, three nodes whose backward the
// tape derives; `softmax` is one node with the handwritten backward
// $dx = y \odot (dy - \sum dy \odot y)$ that keeps only its output y (ops/softmax.h).
// We run both on the same masked 16 x 16 scores (entries of standard
// deviation 3, the causal mask's -inf above the diagonal) with the same
// random output gradient.

// %%
struct SoftmaxRun {
  arma::mat y, dx;
  std::size_t nodes = 0, bytes = 0;
  std::string listing;
};

SoftmaxRun run_softmax(const arma::mat& scores, const arma::mat& dy, bool fused) {
  Tape tape;
  Var x = tape.leaf(scores, "scores");
  Var masked = ag::masked_fill(x, ag::causal_mask(scores.n_rows), -kInf);
  const std::size_t first = tape.size(), bytes_before = tape.saved_bytes();
  Var y = fused ? ag::softmax(masked, 1) : ag::softmax_composed(masked, 1);
  SoftmaxRun r{y.value(), {}, tape.size() - first, tape.saved_bytes() - bytes_before, ag::format_tape(tape)};
  tape.backward(y, dy);
  r.dx = x.grad();
  return r;
}

NB_CELL {
  ag::Rng r(6);
  const arma::uword n = 16;
  const arma::mat scores = r.normal(n, n, 3.0), dy = r.normal(n, n, 1.0);
  const SoftmaxRun composed = run_softmax(scores, dy, false), fused = run_softmax(scores, dy, true);
  std::cout << "composed:\n" << composed.listing << "\nfused:\n" << fused.listing << "\n";
  const double dvalue = arma::abs(composed.y - fused.y).max(), dgrad = arma::abs(composed.dx - fused.dx).max();
  std::printf("largest difference: values %.3g (largest value %.3g), gradients %.3g (largest %.3g)\n", dvalue,
              fused.y.max(), dgrad, arma::abs(fused.dx).max());
  std::printf("%-10s %6s %18s\n", "", "nodes", "bytes for backward");
  std::printf("%-10s %6zu %18zu\n%-10s %6zu %18zu\n", "composed", composed.nodes, composed.bytes, "fused", fused.nodes,
              fused.bytes);
  nb::check_close("composed and fused softmax: the same values", composed.y, fused.y, 1e-15);
  nb::check_close("composed and fused softmax: the same gradients", composed.dx, fused.dx, 1e-14);
  nb::check(fused.nodes == 1 && fused.bytes == 8 * n * n, "the fused softmax is one node keeping its output: 16 x 16 doubles");
  nb::check(composed.nodes == 3 && composed.bytes == 8 * (2 * n * n + n),
            "the composed one is 3 nodes keeping its input, the 16 x 1 logsumexp and its output");
  nb::check(arma::accu(arma::trimatu(fused.dx, 1) != 0.0) == 0, "no gradient reaches a masked score");
}

// %% [markdown]
// ## What each node of a head keeps for backward
//
// The head of the first section, recorded once more, listed node by node
// (check/listing.h): id, op, inputs, shape, and the bytes each node holds for
// its backward. A matmul keeps both of its inputs ($dA = dY \, B^T$, $dB = A^T dY$);
// `cols`, `transpose`, the scale and the bias add keep nothing (their
// derivatives are constants); `masked_fill` keeps where the mask is, as a
// list of indices (16 bytes per masked entry: for a 16 x 16 causal mask, 120
// entries and 1,920 bytes, about what a dense matrix of doubles would take;
// a bit mask would take 32 bytes); the fused softmax keeps its output.

// %%
NB_CELL {
  Tape tape;
  Var x = tape.leaf(x_in, "x");
  const std::size_t first = tape.size();
  const Head head = attention_head(x, tape.param(module.qkv.weight), tape.param(module.qkv.bias));
  std::cout << ag::format_tape(tape);
  std::size_t matmuls = 0, saving = 0;
  for (std::size_t id = first; id < tape.size(); ++id) {
    const ag::Node& node = tape.node(id);
    if (node.op == "matmul") {
      ++matmuls;
      nb::check(node.saved == node.inputs, "node " + std::to_string(id) + ": matmul keeps both of its inputs");
    }
    if (tape.node_saved_bytes(id) > 0) ++saving;
  }
  std::printf("\n%zu matmuls; %zu of the %zu nodes keep something; the head holds %zu bytes for backward\n", matmuls,
              saving, tape.size() - first, tape.saved_bytes());
  nb::check(matmuls == 3, "a head is three matmuls: x Wqkv, q k^T and weights v");
  const ag::Node& softmax = tape.node(head.weights.id);
  nb::check(softmax.saved == std::vector<std::size_t>{head.weights.id}, "the fused softmax keeps its own output only");
}

// %% [markdown]
// ## A tiny GPT, trained for a few seconds
//
// `ag::Gpt` (nn/gpt.h) puts these heads into pre-LN blocks: token and position
// embeddings, 2 blocks of width 32 with 4 heads, a final LayerNorm and a
// linear head to the 27 tokens (the boundary and a-z). One training step is
// the loop below, written out: clear the tape, forward, cross-entropy of every
// next character, backward, clip the gradient norm (lesson 10; Pascanu et
// al. 2013), an Adam step. Batches are
// 32 words from /usr/share/dict/words (data/text.h); the validation words are
// held out, and the count bigram on the same words is the baseline.

// %%
using Batch = ag::SequenceBatch;

const ag::TextData words = ag::load_words();
ag::Rng split_rng(3);
const ag::TextSplit split = ag::split_lines(words, 0.1, split_rng);
const std::vector<ag::Sequence> train_seqs = ag::make_sequences(split.train, 32);
const std::vector<ag::Sequence> val_seqs = [] {
  std::vector<ag::Sequence> all = ag::make_sequences(split.validation, 32);
  all.resize(512);  // enough targets (about 5,000) for a stable mean
  return all;
}();
std::unique_ptr<ag::Gpt> gpt;

double validation_loss(ag::Gpt& model) {
  const Batch b = ag::gather_sequences(val_seqs, 0, val_seqs.size());
  Tape tape;
  ag::NoGrad no_grad(tape);
  return ag::softmax_cross_entropy(model.logits(tape, b.input, b.lengths), b.target).item();
}

NB_CELL {
  ag::GptSpec spec;
  spec.vocab = words.vocab.size(), spec.layers = 2, spec.block.width = 32, spec.block.heads = 4;
  spec.block.impl = ag::Impl::Fused;
  ag::Rng init(1);
  gpt = std::make_unique<ag::Gpt>(spec, init);
  std::cout << gpt->describe() << ", " << gpt->parameter_count() << " parameters\n";
  const double before = validation_loss(*gpt);
  ag::AdamOptions options;
  options.lr = 3e-3;
  ag::Adam adam(gpt->parameters(), options);
  Tape tape;
  const auto start = std::chrono::steady_clock::now();
  const int steps = 300;
  std::vector<double> curve_x, curve_y;
  for (int step = 0; step < steps; ++step) {
    const Batch b = ag::gather_sequences(train_seqs, std::size_t(step) * 32, 32);
    tape.clear();
    adam.zero_grad();
    Var loss = ag::softmax_cross_entropy(gpt->logits(tape, b.input, b.lengths), b.target);
    tape.backward(loss);
    ag::clip_grad_norm(gpt->parameters(), 1.0);
    adam.step();
    if ((step + 1) % 50 == 0) std::printf("step %3d  batch loss %.4f\n", step + 1, loss.item());
    curve_x.push_back(step + 1), curve_y.push_back(loss.item());
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double after = validation_loss(*gpt);
  const double bigram = ag::fit_bigram(train_seqs, words.vocab.size()).loss(val_seqs);
  std::printf("%d steps in %.1f s; validation loss %.4f before, %.4f after; bigram %.4f; uniform %.4f\n", steps,
              seconds, before, after, bigram, std::log(double(words.vocab.size())));
  nb::Plot plot{"training", "Tiny GPT on words: the loss of each batch of 32", "step", "nats per character", false, false,
                {}, {"set key top right"}};
  plot.add("batch loss", curve_x, curve_y);
  plot.add("bigram (validation)", {1.0, double(steps)}, {bigram, bigram}, "lines dt 2 lw 2");
  plot.add("uniform, log 27", {1.0, double(steps)}, {std::log(27.0), std::log(27.0)}, "lines dt 3 lw 2");
  nb::draw(plot);
  nb::check(std::abs(before - std::log(27.0)) < 0.05, "untrained, the GPT's validation loss is within 0.05 of log 27");
  nb::check(after < before - 1, "300 steps lower the validation loss by more than 1 nat per character");
  nb::check(after < bigram, "after 300 steps the GPT beats the bigram on the held-out words");
}

// %% [markdown]
// Before training the model is a uniform guess: its validation loss is $\log 27$
// to within a few hundredths. That is by design (nn/gpt.cpp): the head's
// weights start at a tenth of their Xavier size (Glorot and Bengio 2010), so
// the first logits are all near 0, and the residual projections are scaled by
// $1/\sqrt{2 \cdot \text{layers}}$ as in GPT-2 (Radford et al. 2019, sec. 2.3). makemore
// (part 3) treats a first loss far above $\log V$ as a defect of
// the initialisation: the model starts confidently wrong, and its first steps
// are spent only on shrinking the logits. Lesson 10 measures what each of the
// two scalings does.
//
// ### What beats the bigram: attention, or positions?
//
// The GPT beats the count bigram, but it also knows each character's position,
// and a count model can know that too. Without attention the GPT's prediction
// at a position would depend only on that position's token and its position:
// the best such model is P(next | this character, position), which counts
// estimate (up to the smoothing) from enough data. Below, that
// model counted on the training words (add-one smoothing, as the bigram), and
// the count trigram, P(next | the two characters before), on the same
// validation targets.

// %%
// Mean -log P(target) on `eval` for counts n(context, target) from `train`, add-one smoothed;
// `context` maps (sequence, index) to a context id below `contexts`.
double count_model_loss(const std::function<arma::uword(const ag::Sequence&, arma::uword)>& context,
                        arma::uword contexts, const std::vector<ag::Sequence>& train,
                        const std::vector<ag::Sequence>& eval) {
  const arma::uword V = words.vocab.size();
  arma::mat counts(contexts, V, arma::fill::zeros);
  for (const ag::Sequence& s : train) {
    for (arma::uword i = 0; i < s.size(); ++i) counts(context(s, i), s.target(i)) += 1;
  }
  const arma::vec totals = arma::sum(counts, 1);
  double total = 0;
  std::size_t n = 0;
  for (const ag::Sequence& s : eval) {
    for (arma::uword i = 0; i < s.size(); ++i, ++n) {
      const arma::uword c = context(s, i);
      total -= std::log((counts(c, s.target(i)) + 1) / (totals(c) + V));
    }
  }
  return total / double(n);
}

NB_CELL {
  const arma::uword V = words.vocab.size();
  const double after = validation_loss(*gpt);
  const double bigram = ag::fit_bigram(train_seqs, V).loss(val_seqs);
  const double positional = count_model_loss([V](const ag::Sequence& s, arma::uword i) { return i * V + s.input(i); },
                                             32 * V, train_seqs, val_seqs);
  // The token before the previous one: the boundary (0) at the start of a piece.
  const double trigram = count_model_loss(
      [V](const ag::Sequence& s, arma::uword i) { return (i == 0 ? 0 : s.input(i - 1)) * V + s.input(i); }, V * V,
      train_seqs, val_seqs);
  std::printf("validation loss: bigram %.4f, bigram with the position %.4f, trigram %.4f, the GPT %.4f\n", bigram,
              positional, trigram, after);
  nb::check(positional < bigram - 0.15, "knowing the position alone takes a count model over 0.15 nats below the bigram");
  nb::check(std::abs(after - positional) < 0.05, "after 300 steps the GPT is within 0.05 nats of the bigram with the position");
  nb::check(trigram < after - 0.05, "the count trigram is over 0.05 nats ahead of the GPT");
}

// %% [markdown]
// So the comparison with the bigram alone does not show attention at work.
// Positions alone take a count model from 2.48 to 2.27, and after 300 steps
// the GPT ends level with that model (2.27 both), while the trigram, which
// sees one character further back, reaches 2.17. An ablation separates the
// two: the same GPT, the same 300 batches, its position embedding zeroed and
// frozen. Then only attention can tell it anything beyond the current
// character. It can still learn something about position: a causal model
// without position embeddings can infer where it is from what its mask lets
// it see (Irie et al. 2019; Haviv et al. 2022 measured it in large models).
// This ablation does not separate that from attention to the earlier
// characters themselves.

// %%
NB_CELL {
  ag::GptSpec spec = gpt->spec();
  ag::Rng init(1);
  ag::Gpt blind(spec, init);  // the same initial weights as `gpt`
  ag::Parameter* wpe = nullptr;
  for (ag::Parameter* p : blind.parameters()) wpe = p->name() == "wpe.weight" ? p : wpe;
  wpe->mutable_value().zeros();
  ag::AdamOptions options;
  options.lr = 3e-3;
  ag::Adam adam(blind.parameters(), options);
  Tape tape;
  for (int step = 0; step < 300; ++step) {
    const Batch b = ag::gather_sequences(train_seqs, std::size_t(step) * 32, 32);
    tape.clear();
    adam.zero_grad();
    tape.backward(ag::softmax_cross_entropy(blind.logits(tape, b.input, b.lengths), b.target));
    wpe->mutable_grad().zeros();  // frozen: Adam's moments stay 0, so its step is 0
    ag::clip_grad_norm(blind.parameters(), 1.0);
    adam.step();
  }
  const double without = validation_loss(blind), with = validation_loss(*gpt);
  const double bigram = ag::fit_bigram(train_seqs, words.vocab.size()).loss(val_seqs);
  std::printf("validation loss after 300 steps: with positions %.4f, without %.4f; bigram %.4f\n", with, without, bigram);
  nb::check(arma::accu(arma::abs(wpe->value())) == 0, "the position embedding stayed exactly 0");
  nb::check(without < bigram - 0.1, "without positions the GPT still ends over 0.1 nats below the bigram: attention");
  nb::check(with < without - 0.02, "the position embedding is worth over 0.02 nats more");
}

// %% [markdown]
// Without positions the GPT still ends 0.16 nats below the bigram (2.31
// against 2.48): that much is attention's, whether it uses the characters
// before or only how many there were. The position embedding adds 0.04. A
// longer run goes much further (the default `autograd train --model gpt`,
// two epochs, ends near 1.9: docs/tiny-gpt.md has the figure).
//
// ## Sampling
//
// `ag::sample_lines` (train/sampling.h) starts every word at the boundary
// token, draws the next character from $\mathrm{softmax}(\mathrm{logits} / \mathrm{temperature})$, and
// stops at the next boundary. Lower temperatures sharpen the distribution
// towards the likeliest characters.

// %%
NB_CELL {
  const std::set<std::string> dictionary = [] {
    std::set<std::string> all;
    for (const ag::TokenLine& line : words.lines) all.insert(words.vocab.decode(line));
    return all;
  }();
  std::vector<std::size_t> real;
  for (double temperature : {1.0, 0.5}) {
    ag::Rng sample_rng(11);
    const std::vector<std::string> samples = ag::sample_lines(*gpt, words.vocab, 200, temperature, sample_rng, 30);
    std::size_t in_list = 0, chars = 0;
    for (const std::string& s : samples) in_list += dictionary.count(s), chars += s.size();
    std::printf("temperature %.1f:", temperature);
    for (std::size_t i = 0; i < 10; ++i) std::printf(" %s", samples[i].empty() ? "(empty)" : samples[i].c_str());
    std::printf("\n  %zu of 200 samples are words of the list; mean length %.1f letters\n", in_list, chars / 200.0);
    real.push_back(in_list);
  }
  nb::check(real[1] > 2 * real[0], "at temperature 0.5 over twice as many samples are words of the list as at 1.0");
}

// %% [markdown]
// The samples are not words of the list, mostly, but they are word-shaped:
// the model has learned which letters follow which, where words tend to end,
// and how a letter's chances change along a word. A lower temperature picks
// likelier characters, and more than twice as many of its samples (18 of 200
// against 8) are words of the list.
// (A sample can be empty: the boundary drawn first.)
//
// ## What to remember
//
// - Attention is three matmuls, a scale, a causal mask and a softmax: the tape needs no new derivative for it.
// - A causal mask of -inf gives those scores weight exactly 0 and gradient exactly 0.
// - Composed and fused softmax agree to rounding (3e-16 here); the fused node keeps its output only,
//   the composed graph its input as well, about twice the bytes in three times the nodes.
// - In a head, only the matmuls, the mask and the softmax keep anything for backward.
// - A GPT's training step is the same loop as any model's: forward, loss, backward, clip, Adam.
// - An untrained model should score $\log V$ (3.30 for 27 tokens); a small head makes it so.
// - Beating the bigram does not prove that attention works: compare with the count model that sees
//   what the GPT would see without it (the character and its position), and ablate.

// %% [markdown]
// ## Exercises
//
// 1. (medium) Derive the fused softmax backward $dx = y \odot (dy - \sum dy \odot y)$ from the
//    Jacobian of softmax, $\mathrm{diag}(y) - y y^T$. Why is the output y all it needs?
// 2. (medium) Why does the module scale q by $1/\sqrt{d}$ before the product instead of
//    scaling $q k^T$ after it? Count the multiplications for a sequence of T
//    tokens, and say whether the gradients can differ.
// 3. (medium) With the tape, compute d out(i) / d x(j) for the head of this lesson and
//    show that it is zero for every j > i. Which nodes make it zero?
// 4. (medium) For a sequence of T tokens and a head of width d, how many bytes does the
//    fused head keep for backward, as a function of T and d? Which term wins
//    for long sequences, and what does that say about long contexts?
// 5. (easy) Train with the composed softmax instead (`spec.block.impl = ag::Impl::Composed`
//    also switches the norms and the feed-forward's GELU). Are the losses the
//    same, step by step? To what tolerance, and why not bit for bit?
// 6. (medium) The ablation zeroes the position embedding and its gradient before
//    every Adam step. Why does that keep `wpe` exactly 0 (the lesson checks
//    it), and would it still with AdamW's weight decay? What would go wrong if
//    the gradient were zeroed after `adam.step()` instead?
