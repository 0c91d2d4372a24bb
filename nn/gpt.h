// A tiny GPT (Radford et al. 2019, as in nanoGPT and makemore):
//   x = wte[tokens] + wpe[positions];  x = block_1(x) .. block_N(x);
//   logits = norm_f(x) W_head + b_head          (no norm_f when placement is none)
// Tokens are one per row; a batch is sequences one after another, each with
// its own positions 0 .. length-1 (nn/attention.h says why no padding).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nn/embedding.h"
#include "nn/transformer.h"

namespace ag {

struct GptSpec {
  arma::uword vocab = 27;     // tokens, the boundary included
  arma::uword context = 32;   // the longest sequence (positions)
  arma::uword layers = 4;
  BlockSpec block;            // width, heads, placement, norm, impl, dropout
};

class Gpt : public Module {
 public:
  // Draws every weight from rng in a fixed order (embeddings, blocks, head),
  // so specs that differ only in placement, norm or impl start from the same weights;
  // then scales the head by 0.1 and each block's residual projections by
  // 1/sqrt(2 layers), so the first loss is near log(vocab) (gpt.cpp says why).
  Gpt(const GptSpec& spec, Rng& rng, std::uint64_t dropout_seed = 0);

  // Logits (tokens.n_elem x vocab) for sequences of `lengths` tokens one after another.
  Var logits(Tape& tape, const arma::uvec& tokens, const std::vector<arma::uword>& lengths);
  // The Module form: x is one sequence, a column of token ids.
  Var forward(Var x) override;
  std::vector<Parameter*> parameters() override;
  std::string describe() const override;
  void train(bool on = true) override;
  const GptSpec& spec() const { return spec_; }

 private:
  GptSpec spec_;
  Embedding wte_, wpe_;
  std::vector<std::unique_ptr<TransformerBlock>> blocks_;
  std::unique_ptr<Module> norm_f_;
  std::unique_ptr<Linear> head_;
};

// Throws Error naming the field for a spec no Gpt can have (0 layers, width not a multiple of heads, ...).
void check_gpt_spec(const GptSpec& spec);

}  // namespace ag
