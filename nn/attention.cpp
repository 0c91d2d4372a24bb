#include "nn/attention.h"

#include <cmath>
#include <limits>

#include "ops/indexing.h"
#include "ops/linalg.h"
#include "ops/ops.h"
#include "ops/softmax.h"

namespace ag {

CausalSelfAttention::CausalSelfAttention(const std::string& name, arma::uword width, arma::uword heads, Impl softmax,
                                         Rng& rng, double dropout, std::uint64_t dropout_seed)
    : qkv(name + ".qkv", width, 3 * width, rng, Init::Xavier),
      proj(name + ".proj", width, width, rng, Init::Xavier),
      name_(name),
      width_(width),
      heads_(heads),
      softmax_(softmax),
      dropout_(dropout),
      dropout_rng_(dropout_seed) {
  if (!heads_split_width(width, heads)) {
    throw Error("CausalSelfAttention '" + name + "': the width " + std::to_string(width) +
                " must be a positive multiple of the number of heads " + std::to_string(heads));
  }
  if (!(dropout >= 0 && dropout < 1)) throw Error("CausalSelfAttention '" + name + "': dropout must be in [0, 1)");
}

std::vector<Parameter*> CausalSelfAttention::parameters() {
  return {&qkv.weight, &qkv.bias, &proj.weight, &proj.bias};
}

std::string CausalSelfAttention::describe() const {
  return "CausalSelfAttention(" + std::to_string(width_) + ", " + std::to_string(heads_) + " heads, softmax " +
         impl_name(softmax_) + ")";
}

// One sequence (L rows): q is L x width (already scaled), k_t is width x L, v is L x width.
Var CausalSelfAttention::attend_one_sequence(Var q, Var k_t, Var v) {
  const arma::uword length = q.rows(), d = width_ / heads_;
  const arma::umat mask = causal_mask(length);
  std::vector<Var> heads;
  for (arma::uword h = 0; h < heads_; ++h) {
    Var scores = matmul(cols(q, h * d, d), rows(k_t, h * d, d));  // L x L
    scores = masked_fill(scores, mask, -std::numeric_limits<double>::infinity());
    Var weights = softmax_ == Impl::Fused ? softmax(scores, 1) : softmax_composed(scores, 1);
    weights = dropout(weights, dropout_, dropout_rng_, training());
    heads.push_back(matmul(weights, cols(v, h * d, d)));  // L x d
  }
  return heads.size() == 1 ? heads[0] : hcat(heads);
}

Var CausalSelfAttention::forward(Var x, const std::vector<arma::uword>& lengths) {
  arma::uword total = 0;
  for (arma::uword n : lengths) {
    if (n == 0) throw Error("CausalSelfAttention '" + name_ + "': a sequence of length 0");
    total += n;
  }
  if (x.cols() != width_ || total != x.rows()) {
    throw Error("CausalSelfAttention '" + name_ + "': x is " + x.shape() + ", expected " +
                std::to_string(total) + " x " + std::to_string(width_) + " (the sequence lengths' sum x the width)");
  }
  Var all = qkv(x);  // N x 3 width
  // The 1/sqrt(d_head) scale once on the whole batch's queries, k transposed once.
  Var q = cols(all, 0, width_) * (1.0 / std::sqrt(static_cast<double>(width_ / heads_)));
  Var k_t = transpose(cols(all, width_, width_));
  Var v = cols(all, 2 * width_, width_);
  if (lengths.size() == 1) return proj(attend_one_sequence(q, k_t, v));
  std::vector<Var> sequences;
  arma::uword first = 0;
  for (arma::uword n : lengths) {
    sequences.push_back(attend_one_sequence(rows(q, first, n), cols(k_t, first, n), rows(v, first, n)));
    first += n;
  }
  return proj(vcat(sequences));
}

}  // namespace ag
