#include "nn/transformer.h"

#include "ops/indexing.h"
#include "ops/ops.h"

namespace ag {

const char* placement_name(Placement p) { return p == Placement::Pre ? "pre" : p == Placement::Post ? "post" : "none"; }

Placement parse_placement(const std::string& s) {
  if (s == "pre") return Placement::Pre;
  if (s == "post") return Placement::Post;
  if (s == "none") return Placement::None;
  throw Error("unknown norm placement '" + s + "' (expected pre, post or none)");
}

FeedForward::FeedForward(const std::string& name, arma::uword width, Rng& rng, double dropout, std::uint64_t dropout_seed,
                         Impl gelu)
    : fc(name + ".fc", width, 4 * width, rng, Init::Xavier),
      proj(name + ".proj", 4 * width, width, rng, Init::Xavier),
      dropout_(dropout),
      dropout_rng_(dropout_seed),
      gelu_(gelu) {}

Var FeedForward::forward(Var x) {
  Var h = fc(x);
  h = gelu_ == Impl::Fused ? gelu_fused(h) : gelu(h);
  return dropout(proj(h), dropout_, dropout_rng_, training());
}

std::string FeedForward::describe() const {
  return "FeedForward(" + std::to_string(fc.weight.value().n_rows) + " -> " + std::to_string(fc.weight.value().n_cols) +
         " -> GELU -> " + std::to_string(proj.weight.value().n_cols) + ")";
}

TransformerBlock::TransformerBlock(const std::string& name, const BlockSpec& spec, Rng& rng, std::uint64_t dropout_seed)
    : spec_(spec),
      norm1_(spec.placement == Placement::None ? nullptr : make_norm(name + ".norm1", spec.norm, spec.width, spec.impl)),
      norm2_(spec.placement == Placement::None ? nullptr : make_norm(name + ".norm2", spec.norm, spec.width, spec.impl)),
      attn_(name + ".attn", spec.width, spec.heads, spec.impl, rng, spec.dropout, derive_seed(dropout_seed, 1)),
      ffn_(name + ".ffn", spec.width, rng, spec.dropout, derive_seed(dropout_seed, 2), spec.impl) {
  if (!placement_has_norm(spec)) {
    throw Error("TransformerBlock '" + name + "': placement " + placement_name(spec.placement) +
                " needs a norm (layernorm or rmsnorm)");
  }
}

Var TransformerBlock::forward(Var x, const std::vector<arma::uword>& lengths) {
  switch (spec_.placement) {
    case Placement::Pre:
      x = x + attn_.forward(norm1_->forward(x), lengths);
      return x + ffn_.forward(norm2_->forward(x));
    case Placement::Post:
      x = norm1_->forward(x + attn_.forward(x, lengths));
      return norm2_->forward(x + ffn_.forward(x));
    case Placement::None: break;
  }
  x = x + attn_.forward(x, lengths);
  return x + ffn_.forward(x);
}

std::vector<Parameter*> TransformerBlock::parameters() {
  std::vector<Parameter*> all;
  auto add = [&all](Module* m) {
    if (m == nullptr) return;
    for (Parameter* p : m->parameters()) all.push_back(p);
  };
  add(norm1_.get());
  add(&attn_);
  add(norm2_.get());
  add(&ffn_);
  return all;
}

std::string TransformerBlock::describe() const {
  const std::string norm = norm1_ ? norm1_->describe() : "no norm";
  return std::string("TransformerBlock(") + placement_name(spec_.placement) + "-norm " + norm + ", " + attn_.describe() +
         ", " + ffn_.describe() + ")";
}

void TransformerBlock::scale_residual_projections(double factor) {
  attn_.proj.weight.mutable_value() *= factor;
  ffn_.proj.weight.mutable_value() *= factor;
}

void TransformerBlock::train(bool on) {
  Module::train(on);
  for (Module* m : {norm1_.get(), static_cast<Module*>(&attn_), norm2_.get(), static_cast<Module*>(&ffn_)}) {
    if (m != nullptr) m->train(on);
  }
}

}  // namespace ag
