#include "nn/gpt.h"

#include <cmath>

#include "ops/ops.h"

namespace ag {

void check_gpt_spec(const GptSpec& s) {
  auto fail = [](const std::string& what) { throw Error("GPT: " + what); };
  if (s.vocab < 2) fail("the vocabulary needs at least 2 tokens, got " + std::to_string(s.vocab));
  if (s.context < 1) fail("the context must be at least 1 token");
  if (s.layers < 1) fail("needs at least 1 layer");
  if (!heads_split_width(s.block.width, s.block.heads)) {
    fail("the width " + std::to_string(s.block.width) + " must be a positive multiple of the heads " +
         std::to_string(s.block.heads));
  }
  if (!placement_has_norm(s.block)) fail("norm placement pre or post needs a norm");
  if (!(s.block.dropout >= 0 && s.block.dropout < 1)) fail("dropout must be in [0, 1)");
}

namespace {
// Embeddings start small, N(0, 1/width): GPT-2's 0.02 at its width of 768 is
// about 0.55/sqrt(width); a unit-variance sum of token and position keeps a
// block without norms (placement none) from starting saturated.
double embedding_sd(const GptSpec& s) { return 1.0 / std::sqrt(static_cast<double>(s.block.width)); }
// The head starts small, so the first logits are all near 0 and the first loss is
// near log(vocab), the loss of a uniform guess (makemore part 3 scales its last
// layer by 0.01 for this reason). Xavier alone gives logits of standard
// deviation about sqrt(width (2 / (width + vocab))), 1.2 at width 64: a
// confident random guess (docs/tiny-gpt.md has the first losses with and without it).
constexpr double kHeadScale = 0.1;
// Each block adds two projections (attention's and the FFN's) to the residual
// stream, so 2 layers terms of similar variance add up; GPT-2 (Radford et al.
// 2019, section 2.3; nanoGPT's c_proj init) scales their weights by
// 1/sqrt(2 layers), so the stream at the last block has about the same
// variance at any depth.
double residual_scale(const GptSpec& s) { return 1.0 / std::sqrt(2.0 * static_cast<double>(s.layers)); }
const GptSpec& checked(const GptSpec& s) {
  check_gpt_spec(s);
  return s;
}
}  // namespace

Gpt::Gpt(const GptSpec& spec, Rng& rng, std::uint64_t dropout_seed)
    : spec_(checked(spec)),
      wte_("wte", spec.vocab, spec.block.width, rng, embedding_sd(spec)),
      wpe_("wpe", spec.context, spec.block.width, rng, embedding_sd(spec)) {
  for (arma::uword i = 0; i < spec.layers; ++i) {
    blocks_.push_back(std::make_unique<TransformerBlock>("h" + std::to_string(i), spec.block, rng, derive_seed(dropout_seed, i)));
    blocks_.back()->scale_residual_projections(residual_scale(spec));
  }
  if (spec.block.placement != Placement::None) norm_f_ = make_norm("norm_f", spec.block.norm, spec.block.width, spec.block.impl);
  head_ = std::make_unique<Linear>("head", spec.block.width, spec.vocab, rng, Init::Xavier);
  head_->weight.mutable_value() *= kHeadScale;
}

Var Gpt::logits(Tape& tape, const arma::uvec& tokens, const std::vector<arma::uword>& lengths) {
  arma::uvec positions(tokens.n_elem);
  arma::uword first = 0;
  for (arma::uword n : lengths) {
    if (n == 0 || n > spec_.context || first + n > tokens.n_elem) {
      throw Error("GPT: a sequence of " + std::to_string(n) + " tokens (at token " + std::to_string(first) + " of " +
                  std::to_string(tokens.n_elem) + "); expected 1 to the context of " + std::to_string(spec_.context));
    }
    positions.subvec(first, first + n - 1) = arma::regspace<arma::uvec>(0, n - 1);
    first += n;
  }
  if (first != tokens.n_elem) {
    throw Error("GPT: the lengths add up to " + std::to_string(first) + " tokens, got " + std::to_string(tokens.n_elem));
  }
  Var x = wte_.lookup(tape, tokens) + wpe_.lookup(tape, positions);
  for (const std::unique_ptr<TransformerBlock>& block : blocks_) x = block->forward(x, lengths);
  if (norm_f_) x = norm_f_->forward(x);
  return head_->forward(x);
}

Var Gpt::forward(Var x) {
  const arma::mat& v = x.value();
  arma::uvec tokens(v.n_rows);
  for (arma::uword i = 0; i < v.n_rows; ++i) {
    if (v.n_cols != 1 || !(v(i) >= 0) || v(i) != std::floor(v(i)) || v(i) >= static_cast<double>(spec_.vocab)) {
      throw Error("GPT: expected a column of token ids below " + std::to_string(spec_.vocab) + ", got " + x.shape() +
                  " with " + std::to_string(v(i)) + " in row " + std::to_string(i));
    }
    tokens(i) = static_cast<arma::uword>(v(i));
  }
  return logits(tape_of("GPT", x), tokens, {tokens.n_elem});
}

std::vector<Parameter*> Gpt::parameters() {
  std::vector<Parameter*> all = {&wte_.table, &wpe_.table};
  for (const std::unique_ptr<TransformerBlock>& block : blocks_) {
    for (Parameter* p : block->parameters()) all.push_back(p);
  }
  if (norm_f_) {
    for (Parameter* p : norm_f_->parameters()) all.push_back(p);
  }
  all.push_back(&head_->weight);
  all.push_back(&head_->bias);
  return all;
}

std::string Gpt::describe() const {
  std::string text = "GPT(" + std::to_string(spec_.layers) + " layers, width " + std::to_string(spec_.block.width) + ", " +
                     std::to_string(spec_.block.heads) + " heads, context " + std::to_string(spec_.context) + ", vocab " +
                     std::to_string(spec_.vocab) + ", " + placement_name(spec_.block.placement) + "-norm";
  if (spec_.block.placement != Placement::None) {
    text += std::string(" ") + norm_name(spec_.block.norm) + " " + impl_name(spec_.block.impl);
  } else {
    text += std::string(", softmax ") + impl_name(spec_.block.impl);
  }
  return text + ")";
}

void Gpt::train(bool on) {
  Module::train(on);
  for (const std::unique_ptr<TransformerBlock>& block : blocks_) block->train(on);
  if (norm_f_) norm_f_->train(on);
}

}  // namespace ag
