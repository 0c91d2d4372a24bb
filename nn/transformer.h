// The transformer block: attention and a GELU feed-forward network, each with
// a residual connection, and a norm whose place is a parameter:
//   post-LN (Vaswani et al. 2017; the seeds' "normalise after adding the residual"):
//            x = norm1(x + attn(x));       x = norm2(x + ffn(x))
//   pre-LN  (GPT-2):  x = x + attn(norm1(x));  x = x + ffn(norm2(x))
//   none:             x = x + attn(x);         x = x + ffn(x)
// The norm is LayerNorm or RMSNorm, composed or fused (nn/norm.h); the same
// Impl picks the attention's softmax and the feed-forward's GELU (gelu or
// gelu_fused, ops/gelu.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nn/attention.h"
#include "nn/mlp.h"

namespace ag {

enum class Placement { Pre, Post, None };
const char* placement_name(Placement p);       // "pre", "post", "none"
Placement parse_placement(const std::string& s);  // throws Error on anything else

// ffn(x) = gelu(x W1 + b1) W2 + b2, W1: width x 4 width (GPT-2's expansion);
// `gelu` picks the composed GELU or the fused one (one node).
class FeedForward : public Module {
 public:
  FeedForward(const std::string& name, arma::uword width, Rng& rng, double dropout = 0.0, std::uint64_t dropout_seed = 0,
              Impl gelu = Impl::Composed);
  Var forward(Var x) override;
  std::vector<Parameter*> parameters() override { return {&fc.weight, &fc.bias, &proj.weight, &proj.bias}; }
  std::string describe() const override;

  Linear fc, proj;

 private:
  double dropout_;
  Rng dropout_rng_;
  Impl gelu_;
};

struct BlockSpec {
  arma::uword width = 64;
  arma::uword heads = 4;
  Placement placement = Placement::Pre;
  Norm norm = Norm::LayerNorm;  // ignored (no norm) when placement is None
  Impl impl = Impl::Composed;
  double dropout = 0.0;
};

// The block's norm rule, said once (the block's constructor and check_gpt_spec ask it):
// a norm placed before or after the residual needs a norm to place.
inline bool placement_has_norm(const BlockSpec& spec) { return spec.placement == Placement::None || spec.norm != Norm::None; }

class TransformerBlock : public Module {
 public:
  // Parameters "<name>.norm1.*", "<name>.attn.*", "<name>.norm2.*", "<name>.ffn.*".
  TransformerBlock(const std::string& name, const BlockSpec& spec, Rng& rng, std::uint64_t dropout_seed = 0);
  Var forward(Var x) override { return forward(x, {x.rows()}); }
  Var forward(Var x, const std::vector<arma::uword>& lengths);
  std::vector<Parameter*> parameters() override;
  std::string describe() const override;
  void train(bool on = true) override;
  // Multiplies the two projections that write into the residual stream (attention's
  // proj and the FFN's proj) by `factor`; ag::Gpt uses it for GPT-2's 1/sqrt(2 layers).
  void scale_residual_projections(double factor);

 private:
  BlockSpec spec_;
  std::unique_ptr<Module> norm1_, norm2_;  // null when placement is None
  CausalSelfAttention attn_;
  FeedForward ffn_;
};

}  // namespace ag
