// LayerNorm and RMSNorm, each written twice, and BatchNorm composed.
//
// *_composed are built only from public primitive ops, in the order the LayerNorm
// tutorials this project started from work their examples (mean, then variance),
// with no backward code of their own: the tape derives the gradient.
//   LayerNorm: mean, var (biased), sub, add_scalar eps, sqrt, div, mul gamma, add beta
//   RMSNorm:   square, mean, add_scalar eps, sqrt, div, mul gamma
//   BatchNorm: LayerNorm's eight, down each column (dim 0)
// *_fused are one tape node each with a handwritten backward that saves only
// the per-row mean and rstd (plus references to x and gamma). Both normalise
// each row (one sample/token per row, features across columns); BatchNorm
// normalises each column (over the batch) instead.
//
// Empty input: no rows (LayerNorm, RMSNorm) or no columns (BatchNorm) give an
// empty result of the same shape, and empty dx and zero dgamma, dbeta.
// Errors (ag::Error, naming the op and the shapes): gamma/beta not 1 x D,
// eps not > 0, LayerNorm with D < 2 (a one-feature row has no spread; D = 0
// included), RMSNorm with D = 0, BatchNorm with N < 2.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "autograd/tape.h"

namespace ag {

// How the composed LayerNorm and BatchNorm take the mean.
enum class Centring {
  // mean(x): one node, as the seeds write it. In doubles sum(x) / D rounds, so
  // a constant row c can centre to a few ulps of c instead of exactly 0, and y
  // to beta + gamma * (that error) / sqrt(eps) instead of exactly beta: 4e-15
  // off for c = 0.1 and D = 10, 3e-11 for c = -7.3 and D = 768, 1e-4 for
  // c = 1e8 + 0.1 and D = 768 (within D * 2^-53 * |c| * |gamma| / sqrt(eps)).
  Plain,
  // mean(x) + mean(x - mean(x)): three more nodes (sub, mean, add). The second
  // mean is zero in exact arithmetic; in doubles it is the first one's rounding
  // error, so a constant row centres to exactly 0 and y is exactly beta, as
  // the fused kernels give. A numerics repair, not part of the math.
  Corrected
};

// y = (x - mean) / sqrt(var + eps) * gamma + beta, per row; var biased (divide
// by D, not D - 1 as Armadillo's arma::var does by default).
// x: N x D, gamma and beta: 1 x D.
Var layernorm_composed(Var x, Var gamma, Var beta, double eps = 1e-5, Centring centring = Centring::Plain);
Var layernorm_fused(Var x, Var gamma, Var beta, double eps = 1e-5);

// y = x / sqrt(mean(x^2) + eps) * gamma, per row. gamma: 1 x D.
Var rmsnorm_composed(Var x, Var gamma, double eps = 1e-5);
Var rmsnorm_fused(Var x, Var gamma, double eps = 1e-5);

// Training-mode BatchNorm: the same normalisation down each column (over the batch).
Var batchnorm_composed(Var x, Var gamma, Var beta, double eps = 1e-5, Centring centring = Centring::Plain);

// What each is (autograd/tape.h's OpDef), defined beside it in layernorm.cpp.
// The fused ones carry handwritten forward-mode rules, term by term like their
// backwards; the composed ones record only primitives and have no rule of their own.
const OpDef& layernorm_composed_def();
const OpDef& layernorm_fused_def();
const OpDef& rmsnorm_composed_def();
const OpDef& rmsnorm_fused_def();
const OpDef& batchnorm_composed_def();

// The composed versions step by step, for display (`autograd layernorm`):
// one named Var per recorded node, in the order they were recorded,
// e.g. {"mean", N x 1}, {"variance", N x 1}, {"x - mean", N x D}, ... and
// finally y. (With Centring::Corrected "mean" is the corrected mean, the
// last of its four nodes.)
struct NormSteps {
  std::vector<std::pair<std::string, Var>> steps;
  Var xhat;  // the normalised x (x-hat), before gamma (and beta): one of the steps
  Var y;
};
NormSteps layernorm_composed_steps(Var x, Var gamma, Var beta, double eps = 1e-5,
                                   Centring centring = Centring::Plain);
NormSteps rmsnorm_composed_steps(Var x, Var gamma, double eps = 1e-5);

}  // namespace ag
