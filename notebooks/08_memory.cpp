// %% [markdown]
// # Lesson 08: memory, what each node saves for backward
//
// Backward needs values from the forward: d(a*b)/da = b, so `mul` must keep b
// until backward runs. Every node keeps what its local derivative reads, and all
// of it stays alive from the forward until backward. In a large model that saved
// memory ("activations"), not the weights, is what fills the machine.
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
};

Recorded record(arma::uword n, arma::uword d, bool fused, bool rms, Tape& tape) {
  ag::Rng rng(1);
  Var x = tape.leaf(rng.normal(n, d, 1.0), "x");
  Var gamma = tape.leaf(arma::ones(1, d), "gamma");
  Var beta = tape.leaf(arma::zeros(1, d), "beta");
  const std::size_t leaves = tape.size();
  if (rms) {
    fused ? ag::rmsnorm_fused(x, gamma) : ag::rmsnorm_composed(x, gamma);
  } else {
    fused ? ag::layernorm_fused(x, gamma, beta) : ag::layernorm_composed(x, gamma, beta);
  }
  return {tape.size() - leaves, tape.saved_bytes()};
}

// %% [markdown]
// ## Node by node
//
// A 4 x 8 input (4 tokens, 8 features, doubles of 8 bytes), composed as the
// seeds write it: mean, var, sub, add_scalar, sqrt, div, mul, add. The last
// column is what each node holds for its backward:
//
// - `var` keeps its input x: its derivative 2 (x - mean) / D is recomputed from x,
// - `sqrt` keeps its output (d sqrt(u) = 1 / (2 sqrt(u))),
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
// `sqrt`, as its output, and by `div`, but it exists only once). x is a leaf
// here; in a model it is the previous layer's output, and `var` keeps it alive.
//
// ## The fused node
//
// The fused node keeps references to its inputs x and gamma (they exist anyway,
// as leaves or as the previous layer's output) and two numbers per row, the mean
// and rstd = 1 / std. It recomputes xhat = (x - mean) * rstd in backward rather
// than storing it: one multiply-add per element is cheaper than a round trip to memory.

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
// LayerNorm and RMSNorm. Every version holds its input x; "beyond x" subtracts
// it, leaving what the normalisation holds on top of its input.

// %%
NB_CELL {
  const arma::uword d = 768;
  std::printf("%6s  %-22s %8s %14s %16s\n", "tokens", "version", "nodes", "saved (MB)", "beyond x (MB)");
  std::vector<double> tokens, composed_mb, fused_mb, rms_composed_mb, rms_fused_mb;
  double ratio_beyond_x = 0;
  for (arma::uword n : {16u, 64u, 256u, 1024u, 4096u}) {
    const double x_mb = double(n * d * 8) / 1e6;
    tokens.push_back(double(n));
    for (int version = 0; version < 4; ++version) {
      const bool fused = version % 2 == 1, rms = version >= 2;
      Tape tape;
      const Recorded r = record(n, d, fused, rms, tape);
      const double mb = double(r.bytes) / 1e6;
      std::vector<double>& series = rms ? (fused ? rms_fused_mb : rms_composed_mb) : (fused ? fused_mb : composed_mb);
      series.push_back(mb);
      std::printf("%6llu  %-22s %8zu %14.3f %16.3f\n", (unsigned long long)n,
                  rms ? (fused ? "RMSNorm fused" : "RMSNorm composed") : (fused ? "LayerNorm fused" : "LayerNorm composed"),
                  r.nodes, mb, mb - x_mb);
      if (n == 4096 && !rms && fused) ratio_beyond_x = (composed_mb.back() - x_mb) / (mb - x_mb);
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
  std::printf("at 4096 tokens the composed LayerNorm holds %.2fx the bytes of the fused one, and beyond x %.0fx\n",
              composed_over_fused, ratio_beyond_x);
  nb::check(composed_over_fused > 2.9 && composed_over_fused < 3.0, "composed LayerNorm holds about 3x the bytes of the fused one");
  nb::check(ratio_beyond_x > 650 && ratio_beyond_x < 750,
            "beyond x itself, the fused node holds about 700x less (two numbers per row)");
  const double rms_over_ln = rms_composed_mb.back() / composed_mb.back();
  nb::check(rms_over_ln > 0.66 && rms_over_ln < 0.67, "composed RMSNorm holds 2/3 of composed LayerNorm's bytes");
  nb::check(rms_fused_mb.back() < fused_mb.back() && rms_fused_mb.back() > 0.99 * fused_mb.back(),
            "fused RMSNorm holds a hair less than fused LayerNorm (rstd only, no mean)");
}

// %% [markdown]
// All four grow linearly with the number of tokens. The composed LayerNorm
// keeps three N x D tensors: x (for `var`) and two intermediates of its own,
// x - mean (for `div`) and xhat (for `mul`). The fused node keeps x plus
// 16 bytes per token (mean and rstd). Counted as the tape counts (every
// distinct saved tensor once) the fused node holds a third as much; counted as
// what the normalisation holds beyond its input, about 700 times less.
//
// RMSNorm's composed graph keeps two N x D tensors, x (for `square` and `div`)
// and x / rms (for `mul`): it has no centred copy, so its curve sits at 2/3 of
// LayerNorm's. Its fused node keeps x plus one number per row, and lies on
// LayerNorm's.
//
// ## What to remember
//
// - A node saves what its local derivative reads; constants-derivative ops (add, sub, mean) save nothing.
// - Saved tensors live from the forward until backward: they, not the weights, dominate training memory.
// - Fusing a block into one node lets its backward recompute cheap intermediates instead of storing them.
