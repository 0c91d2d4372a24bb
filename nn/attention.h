// Multi-head causal self-attention (Vaswani et al. 2017; GPT-2's form).
//
// x holds a batch of sequences one after another, one token per row
// ((batch*seq) x width, STYLE.md). For each sequence and each head:
//   att = softmax(mask(q k^T / sqrt(d_head))) v,  mask: -inf where a token would see a later one
// then the heads side by side (hcat), the sequences stacked again (vcat), and
// a projection back to the width.
//
// Why per sequence and not one (N x N) product with a block-diagonal mask:
// the masked product spends batch^2 work to throw away all but the blocks on
// the diagonal (about 8x the work for a batch of 8); cutting each sequence out
// with rows() costs a few small nodes instead, and sequences may then have
// different lengths, so a batch of words needs no padding and no ignored targets.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "autograd/rng.h"
#include "nn/linear.h"
#include "nn/norm.h"

namespace ag {

// The shape rule of multi-head attention, said once: the width splits evenly
// into one or more heads. The constructor, check_gpt_spec (nn/gpt.h) and
// RunConfig::validate (train/config.h) all ask this.
inline bool heads_split_width(arma::uword width, arma::uword heads) { return heads >= 1 && width % heads == 0; }

class CausalSelfAttention : public Module {
 public:
  // Parameters "<name>.qkv.weight" (width x 3 width: q, k, v side by side), "<name>.qkv.bias",
  // "<name>.proj.weight", "<name>.proj.bias". `softmax` picks the composed or fused softmax.
  CausalSelfAttention(const std::string& name, arma::uword width, arma::uword heads, Impl softmax, Rng& rng,
                      double dropout = 0.0, std::uint64_t dropout_seed = 0);

  // x is one sequence.
  Var forward(Var x) override { return forward(x, {x.rows()}); }
  // x is sequences of `lengths` rows one after another (the lengths sum to x.rows()).
  Var forward(Var x, const std::vector<arma::uword>& lengths);
  std::vector<Parameter*> parameters() override;
  std::string describe() const override;

  Linear qkv, proj;

 private:
  Var attend_one_sequence(Var q, Var k_t, Var v);

  std::string name_;
  arma::uword width_, heads_;
  Impl softmax_;
  double dropout_;
  Rng dropout_rng_;
};

}  // namespace ag
