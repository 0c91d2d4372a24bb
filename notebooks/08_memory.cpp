// %% [markdown]
// # Lesson 08: memory, what each node saves for backward
//
// Backward needs values from the forward: $\partial(ab)/\partial a = b$, so `mul` must keep b
// until backward runs. Every node keeps what its local derivative reads, and all
// of it stays alive from the forward until backward. When training large models
// on long sequences, that saved memory ("activations") is often larger than the
// weights.
//
// This lesson counts those bytes for LayerNorm, composed from primitives versus
// fused into one node.

// %%
#include <cstdio>
#include <iostream>
#include <vector>

#include "autograd/rng.h"
#include "check/listing.h"
#include "notebooks/notebook.h"
#include "ops/layernorm.h"
#include "ops/ops.h"

using ag::Tape;
using ag::Var;

struct Recorded {
  std::size_t nodes = 0;  // nodes LayerNorm added (leaves excluded)
  std::size_t bytes = 0;  // distinct tensors held for backward
  Var y;                  // the normalised output
};

Recorded record(arma::uword n, arma::uword d, bool fused, bool rms, Tape& tape) {
  ag::Rng rng(1);
  Var x = tape.leaf(rng.normal(n, d, 1.0), "x");
  Var gamma = tape.leaf(arma::ones(1, d), "gamma");
  Var beta = tape.leaf(arma::zeros(1, d), "beta");
  const std::size_t leaves = tape.size();
  Var y = rms ? (fused ? ag::rmsnorm_fused(x, gamma) : ag::rmsnorm_composed(x, gamma))
              : (fused ? ag::layernorm_fused(x, gamma, beta) : ag::layernorm_composed(x, gamma, beta));
  return {tape.size() - leaves, tape.saved_bytes(), y};
}

// Everything the tape itself holds: every node's value (saved for backward or
// not), what closures own (mean, rstd), and every gradient it has stored.
// saved_bytes() counts only the part of the first two that backward reads.
std::size_t value_bytes(const Tape& tape) {
  std::size_t bytes = 0;
  for (std::size_t id = 0; id < tape.size(); ++id) bytes += 8 * tape.node(id).value.n_elem + tape.node(id).extra_saved_bytes;
  return bytes;
}
std::size_t grad_bytes(const Tape& tape) {
  std::size_t bytes = 0;
  for (std::size_t id = 0; id < tape.size(); ++id) bytes += 8 * tape.node(id).grad.n_elem;
  return bytes;
}

// The nodes (after `first`) whose backward reads the value of node `id`.
std::vector<std::size_t> readers_of(const Tape& tape, std::size_t id, std::size_t first = 0) {
  std::vector<std::size_t> readers;
  for (std::size_t n = first; n < tape.size(); ++n) {
    for (std::size_t s : tape.node(n).saved) {
      if (s == id) readers.push_back(n);  // n == id: a node that keeps its own output
    }
  }
  return readers;
}

// %% [markdown]
// ## Node by node
//
// A 4 x 8 input (4 tokens, 8 features, doubles of 8 bytes), composed as the
// seeds write it: mean, var, sub, add_scalar, sqrt, div, mul, add. The last
// column is what each node holds for its backward:
//
// - `var` keeps its input x: its derivative $2 (x - \mathrm{mean}) / D$ is recomputed from x,
// - `sqrt` keeps its output ($d\sqrt{u}/du = 1 / (2 \sqrt{u})$),
// - `div` and `mul` keep both inputs,
// - `add`, `sub`, `add_scalar`, `mean` keep nothing: their derivatives are constants.

// %%
NB_CELL {
  Tape tape;
  const Recorded r = record(4, 8, false, false, tape);
  std::cout << ag::format_tape(tape);
  std::cout << "\nLayerNorm added " << r.nodes << " nodes holding " << r.bytes << " bytes; the input x itself is "
            << 4 * 8 * 8 << " bytes.\n";
  // x (for var), x - mean (for div), xhat (for mul): three 4x8 tensors; std (4x1) and gamma (1x8).
  nb::check(r.nodes == 8, "the composed LayerNorm is the seeds' 8 nodes");
  nb::check(r.bytes == 8 * (3 * 4 * 8 + 4 + 8), "it holds three x-sized tensors, std and gamma: 864 bytes");
}

// %% [markdown]
// The per-node column counts each saved tensor once per node that saves it;
// the total at the bottom counts each distinct tensor once (std is saved by
// `sqrt`, as its output, and by `div`, but it exists only once).
//
// ## Whose memory is x?
//
// The tape counts x, the input, as held for backward: `var` reads it. Is that
// LayerNorm's cost, or would x be kept anyway by the layer that made it? Look
// at what the neighbours of a LayerNorm in a Transformer block save. A Linear
// layer, $z = x W$, needs x for $dW = x^T dz$ and W for $dx = dz \, W^T$: it saves its
// **input**, not its output. A residual add, $r = x + z$, has derivative 1 for
// both inputs: it saves **nothing**. So when LayerNorm follows a Linear or a
// residual add, nobody but LayerNorm keeps its input alive; in a Transformer
// block, pre-LN or post-LN, LayerNorm's input is the residual stream, the
// output of an add. We build x -> Linear -> residual add -> LayerNorm and
// ask the tape who reads each value.

// %%
NB_CELL {
  Tape tape;
  ag::Rng rng(2);
  Var x = tape.leaf(rng.normal(4, 8, 1.0), "x");
  Var w = tape.leaf(rng.normal(8, 8, 0.3), "W");
  Var z = ag::matmul(x, w);
  Var r = ag::add(x, z);  // the residual stream: LayerNorm's input
  const std::size_t ln_first = tape.size();
  ag::layernorm_composed(r, tape.leaf(arma::ones(1, 8), "gamma"), tape.leaf(arma::zeros(1, 8), "beta"));
  std::cout << ag::format_tape(tape);
  auto names = [&](const std::vector<std::size_t>& ids) {
    std::string out;
    for (std::size_t id : ids) out += " " + tape.node(id).op;
    return out.empty() ? std::string(" (nobody)") : out;
  };
  std::cout << "\nread in backward: x by" << names(readers_of(tape, x.id)) << ";  W by" << names(readers_of(tape, w.id))
            << ";  z = x W by" << names(readers_of(tape, z.id)) << ";  r = x + z by" << names(readers_of(tape, r.id))
            << "\n";
  nb::check(tape.node(z.id).saved.size() == 2 && readers_of(tape, x.id) == std::vector<std::size_t>{z.id},
            "matmul saves its inputs x and W; x is read by nobody else");
  nb::check(readers_of(tape, z.id).empty(), "nobody saves the matmul's output: the add needs no values");
  nb::check(tape.node(r.id).saved.empty(), "the residual add saves nothing");
  const std::vector<std::size_t> readers = readers_of(tape, r.id);
  nb::check(!readers.empty() && readers.front() >= ln_first,
            "LayerNorm's input r is saved by LayerNorm's own nodes only");
}

// %% [markdown]
// So LayerNorm's input is LayerNorm's activation memory, and that is how the
// standard accountings count it: PyTorch's `native_layer_norm` saves its input
// (with the per-row mean and rstd) for backward, and Megatron-LM's activation-memory formula
// ("Reducing Activation Recomputation in Large Transformer Models", Korthikanti
// et al. 2022) charges each LayerNorm 2sbh bytes: its input, in 16-bit, for
// sequence s, batch b, hidden h. We count it the same way below.
//
// ## The fused node
//
// The fused node saves its input x, gamma, and two numbers per row, the mean
// and $\mathrm{rstd} = 1 / \mathrm{std}$. It recomputes $\hat{x} = (x - \mathrm{mean}) \cdot \mathrm{rstd}$ in backward
// instead of storing it. That saves **capacity**, not memory traffic: to
// recompute xhat the backward reads x, which is as large as the xhat it did
// not store, so the bytes read are about the same either way. What it buys is
// that x-sized intermediates (x - mean and xhat) do not have to stay alive
// from the forward to the backward.

// %%
NB_CELL {
  Tape tape;
  const Recorded r = record(4, 8, true, false, tape);
  std::cout << ag::format_tape(tape);
  const std::size_t expected = 4 * 8 * 8 + 8 * 8 + 2 * 4 * 8;  // x, gamma, mean and rstd
  nb::check(r.nodes == 1, "the fused LayerNorm is one node");
  nb::check(r.bytes == expected, "it holds x (256 B) + gamma (64 B) + mean and rstd (64 B) = 384 bytes");
}

// %% [markdown]
// ## At Transformer sizes
//
// d_model = 768 (GPT-2 small), for 16 to 4096 tokens. Counted on real tapes, for
// LayerNorm and RMSNorm; each version's count includes its input x, which, as
// above, is the normalisation's own cost.

// %%
NB_CELL {
  const arma::uword d = 768;
  std::printf("%6s  %-22s %8s %14s\n", "tokens", "version", "nodes", "saved (MB)");
  std::vector<double> tokens, composed_mb, fused_mb, rms_composed_mb, rms_fused_mb;
  for (arma::uword n : {16u, 64u, 256u, 1024u, 4096u}) {
    tokens.push_back(double(n));
    for (int version = 0; version < 4; ++version) {
      const bool fused = version % 2 == 1, rms = version >= 2;
      Tape tape;
      const Recorded r = record(n, d, fused, rms, tape);
      const double mb = double(r.bytes) / 1e6;
      std::vector<double>& series = rms ? (fused ? rms_fused_mb : rms_composed_mb) : (fused ? fused_mb : composed_mb);
      series.push_back(mb);
      std::printf("%6llu  %-22s %8zu %14.3f\n", (unsigned long long)n,
                  rms ? (fused ? "RMSNorm fused" : "RMSNorm composed") : (fused ? "LayerNorm fused" : "LayerNorm composed"),
                  r.nodes, mb);
    }
  }
  nb::Plot plot{"saved_bytes", "Bytes held for backward, 768 features per token", "tokens (rows)",
                "MB held for backward", true, true, {}, {"set key inside top left"}};
  plot.add("LayerNorm composed", tokens, composed_mb, "linespoints pt 7 ps 1.5");
  plot.add("LayerNorm fused", tokens, fused_mb, "linespoints pt 7 ps 1.5");
  plot.add("RMSNorm composed", tokens, rms_composed_mb, "linespoints pt 5 ps 1.3");
  plot.add("RMSNorm fused (on top of LayerNorm's)", tokens, rms_fused_mb, "lines dt 2 lw 3");
  nb::draw(plot);
  const double composed_over_fused = composed_mb.back() / fused_mb.back();
  std::printf("at 4096 tokens the composed LayerNorm holds %.3fx the bytes of the fused one\n", composed_over_fused);
  nb::check(composed_over_fused > 2.9 && composed_over_fused < 3.0,
            "composed LayerNorm holds about 3x the bytes of the fused one (3 x-sized tensors against 1)");
  const double rms_over_ln = rms_composed_mb.back() / composed_mb.back();
  nb::check(rms_over_ln > 0.66 && rms_over_ln < 0.67, "composed RMSNorm holds 2/3 of composed LayerNorm's bytes");
  nb::check(rms_fused_mb.back() < fused_mb.back() && rms_fused_mb.back() > 0.99 * fused_mb.back(),
            "fused RMSNorm holds a hair less than fused LayerNorm (rstd only, no mean)");
}

// %% [markdown]
// All four grow linearly with the number of tokens. The composed LayerNorm
// keeps three $N \times D$ tensors: x (for `var`) and two intermediates of its own,
// $x - \mathrm{mean}$ (for `div`) and $\hat{x}$ (for `mul`). The fused node keeps x plus
// 16 bytes per token (mean and rstd): about a third as much. (Leaving x out of
// both counts would make the ratio look like several hundred, but x is not
// free: no one else keeps it.)
//
// RMSNorm's composed graph keeps two $N \times D$ tensors, x (for `square` and `div`)
// and $x / \mathrm{rms}$ (for `mul`): it has no centred copy, so its curve sits at 2/3 of
// LayerNorm's. Its fused node keeps x plus one number per row, and lies on
// LayerNorm's.
//
// ## What the tape really holds
//
// `saved_bytes()` counts what backward will read. The tape holds more: every
// node keeps its value until `clear()`, whether or not a backward reads it,
// and backward adds a gradient to nodes that need one. We add up every value
// and every gradient on the tape, for 4096 tokens, before and after backward.

// %%
NB_CELL {
  const arma::uword n = 4096, d = 768;
  const double nd_mb = double(n * d * 8) / 1e6;  // one x-sized tensor
  std::printf("%-20s %12s %14s %22s   (one N x D tensor = %.2f MB)\n", "", "saved (MB)", "values (MB)",
              "gradients after (MB)", nd_mb);
  std::vector<double> values_mb(2), grads_mb(2), grads_before(2);
  for (int fused = 0; fused < 2; ++fused) {
    Tape tape;
    const Recorded r = record(n, d, fused == 1, false, tape);
    values_mb[fused] = double(value_bytes(tape)) / 1e6;
    grads_before[fused] = double(grad_bytes(tape));
    tape.backward(r.y, arma::mat(n, d, arma::fill::ones));
    grads_mb[fused] = double(grad_bytes(tape)) / 1e6;
    std::printf("%-20s %12.2f %14.2f %22.2f\n", fused ? "LayerNorm fused" : "LayerNorm composed", double(r.bytes) / 1e6,
                values_mb[fused], grads_mb[fused]);
  }
  // Composed values: x, sub, div, mul, add are N x D; mean, var, add_scalar, sqrt are N x 1; gamma, beta 1 x D.
  const std::size_t composed_values = 8 * (5 * n * d + 4 * n + 2 * d);
  // Fused values: x and y are N x D; gamma, beta 1 x D; plus mean and rstd owned by the closure.
  const std::size_t fused_values = 8 * (2 * n * d + 2 * d + 2 * n);
  nb::check_close("composed tape: 5 N x D values (and 4 columns, 2 rows)", values_mb[0], double(composed_values) / 1e6, 1e-9);
  nb::check_close("fused tape: x and y (and gamma, beta, mean, rstd)", values_mb[1], double(fused_values) / 1e6, 1e-9);
  nb::check(grads_before[0] == 0 && grads_before[1] == 0, "before backward no node holds a gradient");
  nb::check_close("after backward the composed tape holds a gradient beside every value", grads_mb[0],
                  values_mb[0], 1e-9);
  nb::check_close("after backward the fused tape holds a gradient beside every value", grads_mb[1],
                  values_mb[1] - 8.0 * 2 * n / 1e6, 1e-9);
}

// %% [markdown]
// Before backward, the composed tape holds five $N \times D$ values ($x$, $x - \mathrm{mean}$,
// $\hat{x}$, $\gamma \hat{x}$ and $y$), 5/3 of the three its backward will read; the
// fused tape holds two (x and y), twice what its backward reads. Backward then
// leaves a gradient beside every value, intermediate nodes included: the
// composed tape ends at 10 $N \times D$ tensors, the fused one at 4. (PyTorch keeps
// gradients only for leaves and frees what each node saved once its backward
// has run.) That is why a training loop clears the tape after every step, and
// why what limits memory is everything alive at the peak, not only what
// backward reads.
//
// ## What to remember
//
// - A node saves what its local derivative reads; constant-derivative ops (add, sub, mean) save nothing.
// - A Linear layer saves its input, a residual add nothing: LayerNorm's input is LayerNorm's own cost.
// - Composed LayerNorm saves three x-sized tensors, the fused node one (x) plus two numbers per row: about 3x.
// - Recomputing xhat saves capacity, not traffic: backward still reads x.
// - The tape holds every value until `clear()`; `saved_bytes()` is only the part backward reads.

// %% [markdown]
// ## Exercises
//
// 1. (easy) Count by hand the bytes the composed RMSNorm saves for an $N \times D$ input,
//    node by node, and check your formula against the table at 4096 tokens.
// 2. (medium) A Linear layer followed by GELU: who saves the Linear's output? Is a
//    layer's output ever "free" for the next one, and when?
// 3. (easy) Megatron-LM charges a LayerNorm $2sbh$ bytes (16-bit input). For $s = 2048$,
//    $b = 8$, $h = 4096$, how many MB per LayerNorm? How much do mean and rstd add
//    in fp32?
// 4. (medium) Activation checkpointing keeps only each block's input and recomputes the
//    block's forward during backward. What does it cost in memory and in
//    compute, for a model of L equal blocks?
// 5. (hard) This tape keeps every value and every intermediate gradient until
//    `clear()`. Which of them could a tape free, and when, without changing any
//    gradient it returns?
