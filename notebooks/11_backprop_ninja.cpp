// %% [markdown]
// # Lesson 11: backprop ninja
//
// makemore (part 4) takes away `loss.backward()` and differentiates a whole
// network by hand, one intermediate at a time, checking each against the
// framework. This lesson does the same on the tape. The network is makemore's:
// the 3 previous characters of a word, each looked up in an embedding table,
// side by side, then
//
//     Linear(30 -> 64) -> LayerNorm -> tanh -> Linear(64 -> 27) -> cross-entropy
//
// recorded one primitive op per node (LayerNorm as lesson 04's nodes, with
// the variance written as square and mean; the cross-entropy as max, sub,
// exp, sum, log, sub, a one-hot mul, sum and scale). Every node's gradient
// is computed again in plain Armadillo and compared with the tape's, node by
// node. Then the same network with
// BatchNorm in place of LayerNorm (lesson 07: the same eight nodes, down the
// columns), and both norms' backward simplified from the graph to the closed
// form.

// %%
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "autograd/rng.h"
#include "data/text.h"
#include "notebooks/notebook.h"
#include "ops/ops.h"

using ag::Tape;
using ag::Var;

const double eps = 1e-5;
const arma::uword kContext = 3, kEmbed = 10, kHidden = 64, kBatch = 32;

// makemore's examples: the 3 previous characters (the boundary before a word's
// start) and the next one, from the first 500 words; `count` of them drawn at random.
struct Examples {
  arma::umat x;  // count x 3 token ids
  arma::uvec y;  // count next tokens
};

Examples make_examples(const ag::TextData& words, std::size_t count, ag::Rng& rng) {
  std::vector<std::array<arma::uword, 3>> contexts;
  std::vector<arma::uword> next;
  for (std::size_t w = 0; w < 500; ++w) {
    std::array<arma::uword, 3> c = {ag::kBoundary, ag::kBoundary, ag::kBoundary};
    std::vector<arma::uword> chars(words.lines[w].begin(), words.lines[w].end());
    chars.push_back(ag::kBoundary);
    for (arma::uword t : chars) {
      contexts.push_back(c);
      next.push_back(t);
      c = {c[1], c[2], t};
    }
  }
  Examples e{arma::umat(count, kContext), arma::uvec(count)};
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t k = rng.below(next.size());
    for (arma::uword j = 0; j < kContext; ++j) e.x(i, j) = contexts[k][j];
    e.y(i) = next[k];
  }
  return e;
}

// %% [markdown]
// ## The network, one node per step
//
// The parameters start as makemore part 4 starts them: small random biases,
// gamma near 1 and beta near 0 but not exactly, so that no gradient is
// trivially zero and a mistake cannot hide behind a 0 or a 1. `Net` keeps
// every node under a name, in the order it was recorded. The norm's
// statistics are taken along `dim`: 1 (across each row: LayerNorm) or 0 (down
// each column, over the batch: BatchNorm).

// %%
const ag::TextData words = ag::load_words();
const arma::uword V = words.vocab.size();
ag::Rng data_rng(14);
const Examples batch = make_examples(words, kBatch, data_rng);

struct Params {
  arma::mat C, W1, b1, gamma, beta, W2, b2;
};

Params init_params() {
  ag::Rng r(2024);
  const double fan_in = double(kContext * kEmbed);
  return {r.normal(V, kEmbed, 1.0),  r.normal(kContext * kEmbed, kHidden, (5.0 / 3) / std::sqrt(fan_in)),
          r.normal(1, kHidden, 0.1), 1.0 + r.normal(1, kHidden, 0.1),
          r.normal(1, kHidden, 0.1), r.normal(kHidden, V, 0.1),
          r.normal(1, V, 0.1)};
}
const Params params = init_params();

struct Net {
  Tape tape;
  std::vector<std::pair<std::string, Var>> nodes;  // in the order recorded
  Var add(const std::string& name, Var v) {
    nodes.push_back({name, v});
    return v;
  }
  const Var& at(const std::string& name) const {
    for (const auto& [n, v] : nodes) if (n == name) return v;
    throw std::runtime_error("no node " + name);
  }
  const arma::mat& value(const std::string& name) const { return at(name).value(); }
};

// The norm's nine nodes along dim: ops/layernorm.h's eight, the variance as square then mean.
Var norm_nodes(Net& n, Var x, Var gamma, Var beta, int dim) {
  Var mu = n.add("mu", ag::mean(x, dim));
  Var diff = n.add("diff", x - mu);
  Var var = n.add("var", ag::mean(n.add("diff2", ag::square(diff)), dim));  // biased: divide by the count
  Var sd = n.add("sd", ag::sqrt(n.add("var + eps", var + eps)));
  Var xhat = n.add("xhat", diff / sd);
  return n.add("hnorm", n.add("xhat gamma", xhat * gamma) + beta);
}

// Cross-entropy from logits: -mean over the rows of log softmax at the label.
Var loss_nodes(Net& n, Var logits, const arma::uvec& y) {
  Var maxes = n.add("maxes", ag::max(logits, 1));
  Var shifted = n.add("shifted", logits - maxes);
  Var counts_sum = n.add("counts_sum", ag::sum(n.add("counts", ag::exp(shifted)), 1));
  Var logprobs = n.add("logprobs", shifted - n.add("log counts_sum", ag::log(counts_sum)));
  Var picked = n.add("picked", logprobs * n.tape.constant(ag::one_hot(y, V), "one_hot"));
  return n.add("loss", n.add("total", ag::sum(picked)) * (-1.0 / double(y.n_elem)));
}

void forward(Net& n, const Params& p, const Examples& e, int dim) {
  Tape& t = n.tape;
  Var C = n.add("C", t.leaf(p.C, "C")), W1 = n.add("W1", t.leaf(p.W1, "W1")), b1 = n.add("b1", t.leaf(p.b1, "b1"));
  Var gamma = n.add("gamma", t.leaf(p.gamma, "gamma")), beta = n.add("beta", t.leaf(p.beta, "beta"));
  Var W2 = n.add("W2", t.leaf(p.W2, "W2")), b2 = n.add("b2", t.leaf(p.b2, "b2"));
  std::vector<Var> parts;
  for (arma::uword k = 0; k < kContext; ++k) parts.push_back(ag::embedding(C, e.x.col(k)));
  Var emb = n.add("emb", ag::hcat(parts));
  Var hpre = n.add("hpre", n.add("emb W1", ag::matmul(emb, W1)) + b1);
  Var h = n.add("h", ag::tanh(norm_nodes(n, hpre, gamma, beta, dim)));
  Var logits = n.add("logits", n.add("h W2", ag::matmul(h, W2)) + b2);
  t.backward(loss_nodes(n, logits, e.y));
}

Net layer_net, batch_net;

NB_CELL {
  forward(layer_net, params, batch, 1);
  std::printf("%zu named nodes (%zu on the tape, the embedding lookups and the one-hot constant unnamed); loss %.4f, "
              "log 27 = %.4f\n",
              layer_net.nodes.size(), layer_net.tape.size(), layer_net.value("loss")(0), std::log(double(V)));
  nb::check(layer_net.nodes.size() == 31 && layer_net.tape.size() == 35,
            "31 named nodes: 7 parameters and 24 steps; 35 on the tape with the 3 lookups and the one-hot");
}

// %% [markdown]
// ## Backward by hand
//
// Start from d loss / d loss = 1 and walk the list backwards. Each line is
// one node's local rule (lessons 01 and 02): a sum sends the gradient back to
// every element it summed; a broadcast sums it back over the rows or columns
// it was repeated along; a product sends each factor the other's value.
//
//     loss = -total / N               dtotal = -1/N
//     total = sum(picked)             dpicked = dtotal everywhere
//     picked = logprobs * onehot      dlogprobs = dpicked * onehot
//     logprobs = shifted - lsum       dshifted = dlogprobs,  dlsum = -rowsum(dlogprobs)
//     lsum = log(counts_sum)          dcounts_sum = dlsum / counts_sum
//     counts_sum = rowsum(counts)     dcounts = dcounts_sum repeated across the row
//     counts = exp(shifted)           dshifted += dcounts * counts
//     shifted = logits - maxes        dlogits = dshifted,  dmaxes = -rowsum(dshifted)
//     maxes = rowmax(logits)          dlogits += dmaxes at each row's (first) maximum
//     logits = h W2 + b2              dh = dlogits W2^T,  dW2 = h^T dlogits,  db2 = colsum(dlogits)
//     h = tanh(hnorm)                 dhnorm = dh * (1 - h^2)
//
// then the norm's nine nodes (below, written for either dim), then
// hpre = emb W1 + b1 like the second Linear, and the embedding: row i of
// emb holds C[x(i, 0)], C[x(i, 1)], C[x(i, 2)] side by side, so each piece
// of demb is added into the row of dC it was read from, += because a
// character appears in many contexts.

// %%
using Grads = std::map<std::string, arma::mat>;

// stat (a row or a column of statistics) repeated to like's shape: the forward's broadcast.
arma::mat spread(const arma::mat& stat, const arma::mat& like) {
  return arma::repmat(stat, like.n_rows / stat.n_rows, like.n_cols / stat.n_cols);
}

void backward_loss(const Net& n, const arma::uvec& y, Grads& g) {
  const double N = double(y.n_elem);
  const arma::mat onehot = ag::one_hot(y, V);
  g["loss"] = arma::mat(1, 1, arma::fill::ones);
  g["total"] = arma::mat(1, 1, arma::fill::value(-1.0 / N));
  g["picked"] = arma::mat(arma::size(onehot), arma::fill::value(g["total"](0)));
  g["logprobs"] = g["picked"] % onehot;
  g["log counts_sum"] = -arma::sum(g["logprobs"], 1);
  g["counts_sum"] = g["log counts_sum"] / n.value("counts_sum");
  g["counts"] = spread(g["counts_sum"], onehot);
  g["shifted"] = g["logprobs"] + g["counts"] % n.value("counts");
  g["maxes"] = -arma::sum(g["shifted"], 1);
  g["logits"] = g["shifted"];
  const arma::uvec argmax = arma::index_max(n.value("logits"), 1);
  for (arma::uword i = 0; i < argmax.n_elem; ++i) g["logits"](i, argmax(i)) += g["maxes"](i);
}

// y = xhat gamma + beta, xhat = diff / sd, ... along dim, from g["hnorm"] to g["hpre"].
void backward_norm(const Net& n, int dim, Grads& g) {
  const arma::mat &x = n.value("hpre"), &diff = n.value("diff"), &sd = n.value("sd");
  const double count = dim == 1 ? double(x.n_cols) : double(x.n_rows);
  g["xhat gamma"] = g["hnorm"];
  g["beta"] = arma::sum(g["hnorm"], 0);  // gamma and beta are per feature (1 x D) for either dim
  g["gamma"] = arma::sum(g["hnorm"] % n.value("xhat"), 0);
  g["xhat"] = g["hnorm"] % spread(n.value("gamma"), x);
  g["diff"] = g["xhat"] / spread(sd, x);                                       // xhat = diff / sd, through diff
  g["sd"] = -arma::sum(g["xhat"] % diff, dim) / arma::square(sd);              // ... and through sd
  g["var + eps"] = g["sd"] / (2 * sd);                                         // sd = sqrt(var + eps)
  g["var"] = g["var + eps"];
  g["diff2"] = spread(g["var"] / count, x);                                    // var = mean(diff2)
  g["diff"] += g["diff2"] % (2 * diff);                                        // diff2 = diff^2
  g["mu"] = -arma::sum(g["diff"], dim);                                        // diff = x - mu
  g["hpre"] = g["diff"] + spread(g["mu"] / count, x);                          // mu = mean(x)
}

Grads backward_by_hand(const Net& n, const Examples& e, int dim) {
  Grads g;
  backward_loss(n, e.y, g);
  g["h W2"] = g["logits"];
  g["b2"] = arma::sum(g["logits"], 0);
  g["W2"] = n.value("h").t() * g["logits"];
  g["h"] = g["logits"] * n.value("W2").t();
  g["hnorm"] = g["h"] % (1 - arma::square(n.value("h")));
  backward_norm(n, dim, g);
  g["emb W1"] = g["hpre"];
  g["b1"] = arma::sum(g["hpre"], 0);
  g["W1"] = n.value("emb").t() * g["hpre"];
  g["emb"] = g["hpre"] * n.value("W1").t();
  g["C"] = arma::zeros(arma::size(n.value("C")));
  for (arma::uword i = 0; i < e.x.n_rows; ++i) {
    for (arma::uword k = 0; k < kContext; ++k) g["C"].row(e.x(i, k)) += g["emb"].row(i).cols(k * kEmbed, (k + 1) * kEmbed - 1);
  }
  return g;
}

// One line per node, from the loss back: max |by hand - tape| and that relative to
// the node's largest gradient. A node whose gradient is 0 in exact arithmetic
// (`zero`: node -> the gradient that reaches it) is measured against that
// gradient instead. Returns the largest relative error.
using ZeroNodes = std::map<std::string, std::string>;

double compare(const Net& n, const Grads& g, const ZeroNodes& zero) {
  std::printf("%-16s %8s %14s %14s %12s\n", "node", "shape", "max |tape|", "max |diff|", "relative");
  double worst = 0;
  for (auto it = n.nodes.rbegin(); it != n.nodes.rend(); ++it) {
    const arma::mat& tape_grad = it->second.grad();
    const arma::mat& hand = g.at(it->first);
    const double diff = arma::abs(hand - tape_grad).max();
    const auto z = zero.find(it->first);
    const double scale = arma::abs(z == zero.end() ? tape_grad : g.at(z->second)).max();
    worst = std::max(worst, diff / scale);
    std::printf("%-16s %8s %14.6g %14.3g %12.3g\n", it->first.c_str(), it->second.shape().c_str(),
                arma::abs(tape_grad).max(), diff, diff / scale);
  }
  return worst;
}

Grads layer_grads;

NB_CELL {
  layer_grads = backward_by_hand(layer_net, batch, 1);
  nb::check(layer_grads.size() == layer_net.nodes.size(), "a gradient by hand for every one of the 31 named nodes");
  // maxes: moving every logit of a row together changes no probability.
  const double worst = compare(layer_net, layer_grads, {{"maxes", "shifted"}});
  std::printf("largest relative difference: %.3g\n", worst);
  nb::check(worst <= 1e-12, "every node's gradient by hand agrees with the tape's to 1e-12 relative");
  const double dmaxes = arma::abs(layer_net.at("maxes").grad()).max() / arma::abs(layer_grads.at("shifted")).max();
  std::printf("|dmaxes| / max |dshifted| = %.3g\n", dmaxes);
  nb::check(dmaxes < 1e-15, "dmaxes, zero in exact arithmetic, is below 1e-15 of the gradient that reaches it");
}

// %% [markdown]
// From the loss down to the tanh the hand and the tape agree to the last
// bit: the same rules, the same order of operations. From the norm on they
// differ by rounding (5e-16 relative at most, at sd), where the two add the
// same terms in a different order. `dmaxes` is 4e-16 of what reaches it:
// each row of dshifted sums to zero, because the probabilities do not change
// when a row's logits all move together, so only rounding is left.
//
// ## Simplified: what the graph collapses to
//
// Written out node by node, the backward is long; collected, three pieces
// are one line each.
//
// - **Cross-entropy.** Put the loss's nine nodes together and
//   $d\mathrm{logits} = (\mathrm{softmax}(\mathrm{logits}) - \mathrm{onehot}) / N$: the predicted probabilities
//   minus 1 at the label, each row summing to zero. makemore draws it as a
//   picture: one large negative entry a row, at the label (gradient descent
//   pulls that logit up), and every other logit pushed down in proportion to
//   its probability.
// - **tanh.** $d\mathrm{hnorm} = dh \odot (1 - h^2)$, from the output alone.
// - **LayerNorm**, lesson 04's three terms, with $d\hat{x} = d\mathrm{hnorm} \odot \gamma$:
//   $d\mathrm{hpre} = \mathrm{rstd} \left( d\hat{x} - \mathrm{rowmean}(d\hat{x}) - \hat{x} \, \mathrm{rowmean}(d\hat{x} \, \hat{x}) \right)$.

// %%
NB_CELL {
  const Net& n = layer_net;
  const arma::mat logits = n.value("logits");
  arma::mat probs = arma::exp(logits.each_col() - arma::max(logits, 1));
  probs.each_col() /= arma::sum(probs, 1);
  const arma::mat dlogits = (probs - ag::one_hot(batch.y, V)) / double(kBatch);
  const double scale = arma::abs(n.at("logits").grad()).max();
  nb::check_close("dlogits = (softmax - onehot) / N, against the tape (relative)",
                  arma::abs(dlogits - n.at("logits").grad()).max() / scale, 0.0, 1e-12);
  nb::check_close("each row of dlogits sums to zero (relative to its largest entry)",
                  arma::abs(arma::sum(dlogits, 1)).max() / scale, 0.0, 1e-14);
  nb::Plot plot{"dlogits", "N dlogits = softmax - onehot for the first 3 examples", "token", "N dlogits", false, false,
                {}, {"set key inside bottom right", "set xzeroaxis", "set xrange [-1:27]"}};
  for (arma::uword i = 0; i < 3; ++i) {
    std::vector<double> token, value;
    for (arma::uword v = 0; v < V; ++v) token.push_back(double(v) + 0.25 * double(i)), value.push_back(kBatch * dlogits(i, v));
    plot.add("example " + std::to_string(i) + ", label " + std::to_string(batch.y(i)), token, value, "impulses lw 3");
  }
  nb::draw(plot);
  const arma::uvec label_cells = batch.y + arma::regspace<arma::uvec>(0, kBatch - 1) * V;  // row-major index
  const arma::mat dlogits_t = dlogits.t();  // so that element i * V + y_i is row i, column y_i
  nb::check(arma::all(dlogits_t.elem(label_cells) < 0), "at each example's label dlogits is negative: p - 1 < 0");
  nb::check(arma::accu(dlogits > 0) == kBatch * (V - 1), "everywhere else it is positive: p > 0");

  const arma::mat &xhat = n.value("xhat"), &dhnorm = n.at("hnorm").grad();
  const arma::vec rstd = 1.0 / n.value("sd");
  arma::mat dxhat = dhnorm;
  dxhat.each_row() %= n.value("gamma");
  arma::mat dhpre = dxhat.each_col() - arma::vec(arma::mean(dxhat, 1));
  dhpre -= xhat.each_col() % arma::vec(arma::mean(dxhat % xhat, 1));
  dhpre.each_col() %= rstd;
  const double hscale = arma::abs(n.at("hpre").grad()).max();
  nb::check_close("LayerNorm's three terms against the tape's dhpre (relative)",
                  arma::abs(dhpre - n.at("hpre").grad()).max() / hscale, 0.0, 1e-12);
  nb::check_close("each row of dhpre sums to zero (LayerNorm, lesson 04)",
                  arma::abs(arma::sum(n.at("hpre").grad(), 1)).max() / hscale, 0.0, 1e-14);

  // The library's ops give the same parameter gradients as the 24 steps written out above.
  Tape t;
  Var W1 = t.leaf(params.W1), gamma = t.leaf(params.gamma), W2 = t.leaf(params.W2), C = t.leaf(params.C);
  std::vector<Var> parts;
  for (arma::uword k = 0; k < kContext; ++k) parts.push_back(ag::embedding(C, batch.x.col(k)));
  Var hpre = ag::matmul(ag::hcat(parts), W1) + t.constant(params.b1);
  Var h = ag::tanh(ag::layernorm_fused(hpre, gamma, t.constant(params.beta), eps));
  t.backward(ag::softmax_cross_entropy(ag::matmul(h, W2) + t.constant(params.b2), batch.y));
  for (const auto& [name, v] : std::vector<std::pair<std::string, Var>>{{"C", C}, {"W1", W1}, {"gamma", gamma}, {"W2", W2}}) {
    const arma::mat& ours = layer_grads.at(name);
    nb::check_close("d" + name + ": by hand against layernorm_fused + softmax_cross_entropy (relative)",
                    arma::abs(ours - v.grad()).max() / arma::abs(ours).max(), 0.0, 1e-12);
  }
}

// %% [markdown]
// ## BatchNorm: the same graph, down the columns
//
// makemore's network has a BatchNorm where ours has a LayerNorm. Lesson 07
// built BatchNorm from LayerNorm's eight nodes with the statistics taken over
// the batch (dim 0) instead of over the features (dim 1). So the graph
// backward above is BatchNorm's too, with every row sum of a statistic's
// gradient turned into a column sum (gamma and beta are per feature in both,
// so their sums stay down the columns); `backward_norm` takes the dim. The same network with dim 0:

// %%
Grads batch_grads;

NB_CELL {
  forward(batch_net, params, batch, 0);
  batch_grads = backward_by_hand(batch_net, batch, 0);
  std::printf("loss with BatchNorm %.4f\n", batch_net.value("loss")(0));
  const double worst = compare(batch_net, batch_grads, {{"maxes", "shifted"}, {"b1", "hpre"}});
  std::printf("largest relative difference: %.3g\n", worst);
  nb::check(worst <= 1e-12, "BatchNorm: every node's gradient by hand agrees with the tape's to 1e-12 relative");
  const double db1 = arma::abs(batch_net.at("b1").grad()).max() / arma::abs(batch_grads.at("hpre")).max();
  std::printf("|db1| / max |dhpre| = %.3g\n", db1);
  nb::check(db1 < 1e-14, "with BatchNorm after it, b1's gradient is zero (below 1e-14 of dhpre): the mean removes it");
  nb::check(batch_net.value("mu").n_rows == 1 && batch_net.value("mu").n_cols == kHidden,
            "BatchNorm's statistics are one per feature (1 x 64), LayerNorm's one per example (32 x 1)");
}

// %% [markdown]
// One gradient is new: b1's is zero (7.7e-16 of dhpre, rounding). b1 adds the
// same number to a feature in every example of the batch, and BatchNorm
// subtracts the feature's batch mean, so b1 cannot change the loss: a bias
// before a BatchNorm is wasted (makemore part 3 drops it; part 4, the lecture
// this lesson follows, keeps b1 to show exactly this; BatchNorm's beta does
// its job). Before a LayerNorm it is not, because LayerNorm subtracts each
// example's mean over its features, and b1 differs from feature to feature.
//
// Collect BatchNorm's graph the way lesson 04 collected LayerNorm's. With
// N rows, $d\hat{x} = d\mathrm{hnorm} \odot \gamma$, $\hat{x}$ and $\mathrm{rstd} = 1 / \mathrm{sd}$ per column:
//
// $$
// dx = \frac{\mathrm{rstd}}{N} \left( N \, d\hat{x} - \mathrm{colsum}(d\hat{x}) - \hat{x} \, \mathrm{colsum}(d\hat{x} \, \hat{x}) \right)
// $$
//
// the three paths again: directly through diff, through the column mean, and
// through the column variance. makemore writes $n / (n - 1)$ in front of the
// last term because it normalises with the unbiased variance; BatchNorm in
// training (PyTorch's and ag::BatchNorm's) normalises with the biased one, as
// here, and keeps the unbiased one for the running statistics only. Every
// column of dx sums to zero: shifting a feature by the same amount in every
// example of the batch changes nothing.

// %%
NB_CELL {
  const Net& n = batch_net;
  const arma::mat &xhat = n.value("xhat"), &dhnorm = n.at("hnorm").grad();
  const double N = double(kBatch);
  const arma::rowvec rstd = 1.0 / n.value("sd");
  arma::mat dxhat = dhnorm;
  dxhat.each_row() %= n.value("gamma");
  arma::mat dx = N * dxhat;
  dx.each_row() -= arma::rowvec(arma::sum(dxhat, 0));
  dx -= xhat.each_row() % arma::rowvec(arma::sum(dxhat % xhat, 0));
  dx.each_row() %= rstd / N;
  const arma::mat& tape_dx = n.at("hpre").grad();
  const double scale = arma::abs(tape_dx).max();
  nb::check_close("BatchNorm's closed form against the tape's dhpre (relative)", arma::abs(dx - tape_dx).max() / scale, 0.0,
                  1e-12);
  nb::check_close("BatchNorm's closed form against the graph by hand (relative)",
                  arma::abs(dx - batch_grads.at("hpre")).max() / scale, 0.0, 1e-12);
  nb::check_close("each column of dx sums to zero", arma::abs(arma::sum(tape_dx, 0)).max() / scale, 0.0, 1e-14);

  Tape t;
  Var x = t.leaf(n.value("hpre"));
  t.backward(ag::batchnorm_composed(x, t.constant(params.gamma), t.constant(params.beta), eps), dhnorm);
  nb::check_close("the closed form against ag::batchnorm_composed's dx (relative)", arma::abs(dx - x.grad()).max() / scale,
                  0.0, 1e-12);
  arma::mat last = xhat;  // the third term, rstd / N * xhat * colsum(dxhat * xhat)
  last.each_row() %= rstd % arma::rowvec(arma::sum(dxhat % xhat, 0)) / N;
  const arma::mat makemore = dx - last / (N - 1);  // n / (n - 1) in place of 1 in front of it
  std::printf("with makemore's n / (n - 1) on the last term: max |difference| %.3g (relative %.3g)\n",
              arma::abs(makemore - tape_dx).max(), arma::abs(makemore - tape_dx).max() / scale);
  nb::check(arma::abs(makemore - tape_dx).max() / scale > 1e-3,
            "the unbiased variance's formula is a different gradient here: off by over 1e-3 relative");
}

// %% [markdown]
// The factor $n / (n - 1) = 32/31$ is 3% on one term: small enough to train
// with, large enough to fail a check at 1e-12. It is the derivative of a
// different function (the normalisation with the unbiased variance); the
// check tells which function a formula differentiates.
//
// ## What to remember
//
// - Every node's backward is one local rule: a sum repeats the gradient, a broadcast sums it, a
//   product swaps the factors, a lookup adds into the row it read (+= for repeated tokens).
// - Compare by hand with the tape node by node: a mistake shows up at the first node it reaches.
// - Collected, the cross-entropy is (softmax - onehot) / N, and a norm's backward is three terms:
//   direct, through the mean, through the variance; LayerNorm over each row, BatchNorm down each column.
// - A formula can be right for a slightly different function (the unbiased variance): only a tight
//   comparison tells.

// %% [markdown]
// ## Exercises
//
// 1. (medium) Derive the cross-entropy's closed form $d\mathrm{logits} = (\mathrm{softmax} - \mathrm{onehot}) / N$
//    from the nine-node backward above. Where do `maxes` and `counts_sum` go?
// 2. (medium) Replace tanh by GELU (ops/gelu.h). Write dhnorm by hand and compare it
//    with the tape's, as the first table does.
// 3. (hard) Write BatchNorm's backward for the unbiased variance (divide by N - 1
//    in the normalisation), check it against a tape of the same function, and
//    show that makemore's $n / (n - 1)$ term is what comes out.
// 4. (easy) The embedding's backward adds each piece of demb into a row of dC. How
//    many rows of dC are non-zero for this batch, and why does a row's
//    gradient grow with how often its character appears?
// 5. (hard) A pre-LN transformer block, y = x1 + ffn(LN2(x1)) with
//    x1 = x + attn(LN1(x)) (lesson 10; attention of lesson 09, one sequence,
//    4 heads; $\mathrm{ffn}(z) = \mathrm{gelu}(z W_1 + b_1) W_2 + b_2$). Write its whole backward in
//    plain Armadillo, from dy to dx and every parameter's gradient, and
//    compare each with `ag::TransformerBlock`'s on the tape.
