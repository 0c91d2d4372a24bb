// %% [markdown]
// # Lesson 09: attention from first principles
//
// A transformer block mixes information between the tokens of a sequence
// with attention, and the next two lessons use it. Each token i asks a
// question (its query q_i), every token j offers a key k_j and a value v_j,
// and token i's output is an average of the values weighted by how well its
// query matches each key:
//
// $$
// \text{scores} = \frac{q k^T}{\sqrt{d}}, \quad \text{weights} = \mathrm{softmax}(\text{scores}) \text{ along each row}, \quad \text{out} = \text{weights} \; v
// $$
//
// with q = x Wq, k = x Wk, v = x Wv for the T x D input x and d the width of
// a query. This lesson measures the four things that make it work: why the
// scores are divided by sqrt(d), what heads are, what the causal mask does,
// and why attention needs position embeddings.

// %%
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include "autograd/rng.h"
#include "nn/attention.h"
#include "notebooks/notebook.h"
#include "ops/ops.h"

using ag::Tape;
using ag::Var;

// softmax of each row of m, in doubles (the largest subtracted first, as ag::softmax does).
arma::mat row_softmax(const arma::mat& m) {
  arma::mat e = arma::exp(m.each_col() - arma::max(m, 1));
  e.each_col() /= arma::sum(e, 1);
  return e;
}

// The Frobenius norm of one row's softmax Jacobian, diag(y) - y y^T (lesson 13, exercise 1).
double jacobian_norm(const arma::rowvec& y) { return arma::norm(arma::diagmat(y) - y.t() * y, "fro"); }

// What reaches q, for a random upstream gradient dW of the weights: the softmax's
// backward dS = W * (dW - rowsum(dW * W)), then dq = dS k (raw scores) or dS k / sqrt(d)
// (scaled). A row "passes under 1%" when its Jacobian's norm is below 0.005,
// 1% of a row split evenly between two tokens (norm 1/2).
struct QGradient {
  int dead_raw = 0, dead_scaled = 0;
  double dq_raw = 0, dq_scaled = 0;
};
QGradient gradient_to_q(const arma::mat& q, const arma::mat& k, const arma::mat& w_raw, const arma::mat& w_scaled,
                        arma::uword d) {
  const arma::mat dw = ag::Rng(1000 + d).normal(q.n_rows, q.n_rows, 1.0);
  auto dq = [&](const arma::mat& w, double scale) {
    const arma::mat ds = w % arma::mat(dw.each_col() - arma::vec(arma::sum(dw % w, 1)));
    return arma::norm(ds * k * scale, "fro");
  };
  QGradient g;
  g.dq_raw = dq(w_raw, 1.0), g.dq_scaled = dq(w_scaled, 1 / std::sqrt(double(d)));
  for (arma::uword i = 0; i < q.n_rows; ++i) {
    g.dead_raw += jacobian_norm(w_raw.row(i)) < 0.005;
    g.dead_scaled += jacobian_norm(w_scaled.row(i)) < 0.005;
  }
  return g;
}

// %% [markdown]
// ## Why sqrt(d)
//
// If the entries of q and k are independent with mean 0 and variance 1, the
// score $q_i \cdot k_j$ is a sum of $d$ products of variance 1 each: its variance is
// d. At d = 256 the scores have a standard deviation of 16, and the softmax
// of numbers that far apart is nearly one-hot: each token looks at one other
// token only, and the softmax's Jacobian $\mathrm{diag}(y) - y y^T$ is nearly 0 in that
// row, so the row passes almost no gradient to its scores. Dividing by $\sqrt{d}$ brings the variance
// back to 1 at every width (Vaswani et al. 2017, section 3.2.1). Below, T = 32
// tokens with unit-variance q and k, for d from 4 to 256: the spread of the
// scores, the mean of each row's largest weight, and the mean norm of each
// row's softmax Jacobian, without and with the scale.

// %%
NB_CELL {
  const arma::uword T = 32;
  std::printf("%5s %12s %12s %14s %14s %12s %12s\n", "d", "sd raw", "sd scaled", "max w raw", "max w scaled",
              "|J| raw", "|J| scaled");
  std::vector<double> ds, raw_j, scaled_j;
  std::vector<QGradient> saturation;
  for (arma::uword d : {4, 16, 64, 256}) {
    ag::Rng rng(d);
    const arma::mat q = rng.normal(T, d, 1.0), k = rng.normal(T, d, 1.0);
    const arma::mat raw = q * k.t(), scaled = raw / std::sqrt(double(d));
    const arma::mat w_raw = row_softmax(raw), w_scaled = row_softmax(scaled);
    double j_raw = 0, j_scaled = 0;
    for (arma::uword i = 0; i < T; ++i) j_raw += jacobian_norm(w_raw.row(i)) / T, j_scaled += jacobian_norm(w_scaled.row(i)) / T;
    const double sd_raw = arma::stddev(arma::vectorise(raw)), sd_scaled = arma::stddev(arma::vectorise(scaled));
    std::printf("%5llu %12.3f %12.3f %14.3f %14.3f %12.4f %12.4f\n", (unsigned long long)d, sd_raw, sd_scaled,
                arma::mean(arma::max(w_raw, 1)), arma::mean(arma::max(w_scaled, 1)), j_raw, j_scaled);
    nb::check(std::abs(sd_raw / std::sqrt(double(d)) - 1) < 0.15, "the raw scores' sd is sqrt(d) to within 15%");
    nb::check(std::abs(sd_scaled - 1) < 0.15, "the scaled scores' sd is 1 to within 15%");
    ds.push_back(double(d)), raw_j.push_back(j_raw), scaled_j.push_back(j_scaled);
    saturation.push_back(gradient_to_q(q, k, w_raw, w_scaled, d));
  }
  std::printf("\n%5s %22s %22s %12s %12s\n", "d", "rows passing < 1% raw", "rows passing < 1% scaled", "|dq| raw",
              "|dq| scaled");
  for (std::size_t i = 0; i < ds.size(); ++i) {
    const QGradient& g = saturation[i];
    std::printf("%5.0f %22d %22d %12.3f %12.3f\n", ds[i], g.dead_raw, g.dead_scaled, g.dq_raw, g.dq_scaled);
  }
  const QGradient& wide = saturation.back();
  nb::check(wide.dead_raw > int(T) / 3 && wide.dead_scaled == 0,
            "d = 256: over a third of the raw rows pass under 1%; with the scale none does");
  nb::check(wide.dq_raw > 2 * wide.dq_scaled, "yet the raw |dq| is over twice the scaled one: the rest is concentrated");
  nb::check(raw_j.back() < scaled_j.back() / 3, "d = 256: without the scale the softmax passes under a third of the gradient");
  nb::check(scaled_j.back() > 0.5 * scaled_j.front(), "with the scale the Jacobian's norm stays within 2x from d = 4 to 256");
  nb::Plot plot{"softmax_jacobian", "Mean norm of a row's softmax Jacobian, 32 tokens", "d (query width)",
                "|diag(y) - y y^T|_F", true, true, {}, {"set key inside bottom left", "set xrange [3:350]"}};
  plot.add("scores q k^T", ds, raw_j, "linespoints pt 7");
  plot.add("scores q k^T / sqrt(d)", ds, scaled_j, "linespoints pt 7");
  nb::draw(plot);
}

// %% [markdown]
// Without the scale the rows saturate as d grows: the mean largest weight
// goes from 0.33 at d = 4 to 0.96 at d = 256, and the Jacobian's norm falls
// from 0.31 to 0.05. With the scale the largest weight stays near 0.16 and
// the norm near 0.24 at every d.
//
// That does not mean less gradient reaches q in total. The raw scores are
// $\sqrt{d}$ times larger, so the gradient that gets through is multiplied by
// $k$ without the $1 / \sqrt{d}$: the second table shows the raw |dq| *larger*
// than the scaled one at every d. What saturation does is concentrate it: at
// d = 256 about half of the raw rows (over a third, checked) pass under 1%
// of what a row split evenly between two tokens passes, so those queries
// barely learn, while the other rows get large gradients through scores of
// size 16, and a small step changes their weights abruptly. Vaswani et al.
// (2017, section 3.2.1) give the "extremely small gradients" of a saturated
// softmax as the reason for the scale; their footnote 4 is the variance
// argument above.
// (`ag::CausalSelfAttention` scales q once, before the product: lesson 13,
// exercise 2, says why.)
//
// ## The causal mask
//
// A language model predicts token i + 1 from tokens 0 .. i, so token i must
// not look at later tokens. The mask sets the scores above the diagonal to
// -inf before the softmax; exp(-inf) = 0, so those weights are exactly 0 and
// row i averages the values of tokens 0 .. i only. Lesson 13 builds a masked
// head from primitives and checks that no gradient crosses the mask; here we
// only look at what it does to the weights of 5 tokens.

// %%
NB_CELL {
  const arma::uword T = 5, d = 4;
  ag::Rng rng(3);
  const arma::mat q = rng.normal(T, d, 1.0), k = rng.normal(T, d, 1.0);
  Tape tape;
  Var scores = tape.constant(q * k.t() / std::sqrt(double(d)));
  Var masked = ag::masked_fill(scores, ag::causal_mask(T), -std::numeric_limits<double>::infinity());
  const arma::mat w = ag::softmax(masked, 1).value();
  nb::show("causal weights (row i: how much token i takes from token j)", w, 3);
  nb::check(arma::accu(arma::trimatu(w, 1) != 0.0) == 0, "every weight above the diagonal is exactly 0");
  nb::check_close("each row still sums to 1", arma::mat(arma::sum(w, 1)), arma::ones(T, 1), 1e-15);
}

// %% [markdown]
// ## Heads
//
// One head gives each token one weighted average. h heads split the width D
// into h slices of d = D / h: each slice of q, k and v is its own head with
// its own softmax, so each token can attend to different tokens in each
// head, and the h outputs of width d are put side by side and projected back
// to D. The parameters are the same (Wq, Wk, Wv are D x D, then the D x D
// projection): heads cost no weights, only more, smaller softmaxes. Below,
// `ag::CausalSelfAttention` with D = 16 and 4 heads against the same
// computation done head by head in Armadillo, with each head scaled by
// 1/sqrt(4), its own width.

// %%
const arma::uword kD = 16, kHeads = 4, kT = 6;
ag::Rng module_rng(7);
ag::CausalSelfAttention attention("attn", kD, kHeads, ag::Impl::Fused, module_rng);
const arma::mat tokens = ag::Rng(8).normal(kT, kD, 1.0);

NB_CELL {
  const arma::uword d = kD / kHeads;
  const arma::mat all = tokens * attention.qkv.weight.value() + arma::repmat(attention.qkv.bias.value(), kT, 1);
  const arma::mat q = all.cols(0, kD - 1), k = all.cols(kD, 2 * kD - 1), v = all.cols(2 * kD, 3 * kD - 1);
  const arma::mat future = arma::trimatu(arma::ones(kT, kT), 1) * 1e300;  // -1e300: exp gives exactly 0
  arma::mat heads(kT, kD);
  std::vector<arma::mat> weights;
  for (arma::uword h = 0; h < kHeads; ++h) {
    const arma::span slice(h * d, h * d + d - 1);
    const arma::mat scores = q.cols(slice) * k.cols(slice).t() / std::sqrt(double(d)) - future;
    weights.push_back(row_softmax(scores));
    heads.cols(slice) = weights.back() * v.cols(slice);
  }
  const arma::mat by_hand = heads * attention.proj.weight.value() + arma::repmat(attention.proj.bias.value(), kT, 1);
  Tape tape;
  const arma::mat by_module = attention(tape.constant(tokens)).value();
  nb::check_close("4 heads by hand = CausalSelfAttention(16, 4 heads)", by_hand, by_module, 1e-13);
  std::printf("the last token's weights in each head:\n");
  for (arma::uword h = 0; h < kHeads; ++h) {
    std::printf("  head %llu:", (unsigned long long)h);
    for (arma::uword j = 0; j < kT; ++j) std::printf(" %.3f", weights[h](kT - 1, j));
    std::printf("\n");
  }
  double spread = 0;
  for (arma::uword h = 1; h < kHeads; ++h) spread = std::max(spread, arma::abs(weights[h].row(kT - 1) - weights[0].row(kT - 1)).max());
  nb::check(spread > 0.05, "the heads weight the same tokens differently (by over 0.05 somewhere)");
  std::printf("parameters: qkv %llu + proj %llu, the same for any number of heads that divides %llu\n",
              (unsigned long long)(attention.qkv.weight.value().n_elem + attention.qkv.bias.value().n_elem),
              (unsigned long long)(attention.proj.weight.value().n_elem + attention.proj.bias.value().n_elem),
              (unsigned long long)kD);
}

// %% [markdown]
// ## Why position embeddings
//
// Nothing in q k^T knows where a token is: permute the tokens and the scores
// are permuted with them. With the causal mask, the last token attends to all
// the tokens before it through a weighted average, and an average does not
// depend on the order of its terms. So the last token's output is the same
// for "tops" and "pots" if only the letters were embedded. A GPT adds a
// learned vector per position to each token's embedding (x = wte[token] +
// wpe[position], nn/gpt.h), which makes the order visible. Below, the
// attention above on 6 tokens, and on the same tokens with the first five
// reversed: without positions the last row of the output does not change
// (up to rounding: the sum runs in another order), with positions it does.

// %%
NB_CELL {
  arma::mat reordered = tokens;
  for (arma::uword i = 0; i < kT - 1; ++i) reordered.row(i) = tokens.row(kT - 2 - i);  // the first five reversed
  const arma::mat positions = ag::Rng(9).normal(kT, kD, 1.0);
  Tape tape;
  auto last_row = [&tape](const arma::mat& x) { return arma::rowvec(attention(tape.constant(x)).value().row(kT - 1)); };
  const double without = arma::abs(last_row(tokens) - last_row(reordered)).max();
  const double with = arma::abs(last_row(tokens + positions) - last_row(reordered + positions)).max();
  std::printf("largest change of the last token's output when the first five are reversed:\n");
  std::printf("  without positions %.3g, with positions %.3g\n", without, with);
  nb::check(without < 1e-14, "without positions the last token cannot tell the order (change below 1e-14)");
  nb::check(with > 0.01, "with position embeddings it can (change above 0.01)");
}

// %% [markdown]
// ## What to remember
//
// - Attention is $\mathrm{softmax}(q k^T / \sqrt{d}) \, v$: each token's output is an average of values, weighted by
//   how its query matches each key.
// - Unit-variance q and k give scores of variance d; without $1/\sqrt{d}$ wide heads saturate the softmax:
//   most rows pass almost no gradient, and the rest pass large ones.
// - The causal mask puts -inf above the diagonal: those weights are exactly 0.
// - h heads split the width into h slices, each with its own softmax, for the same parameters.
// - Attention alone is blind to order (an average does not depend on the order of its terms); position
//   embeddings make the order visible.
//
// ## Exercises
//
// 1. (easy) Show that if q and k have independent entries of mean 0 and variance 1,
//    $q \cdot k$ has mean 0 and variance $d$. What if their entries have variance $s^2$?
// 2. (medium) A row of scores with one entry a above all the others (which are equal):
//    what is the largest softmax weight, as a function of a and T? How large
//    must a be for it to exceed 0.9 with T = 32?
// 3. (easy) Why is the weight above the diagonal exactly 0 and not just small?
//    What would go wrong with a mask of -1e9 instead of -inf, and when?
// 4. (easy) With D = 16, compare 1 head and 16 heads: how many parameters each, and
//    how many numbers each keeps for the softmaxes of a sequence of T tokens?
// 5. (medium) Without position embeddings, which outputs besides the last token's
//    stay the same when the first five tokens are reversed, and which change?
