#include "ops/layernorm.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "ops/elementwise.h"
#include "ops/norm_kernels.h"
#include "ops/reduce.h"

namespace ag {

namespace {

// gamma (and beta) must be 1 x D, eps a positive number, and there must be at
// least `min_count` values to normalise over along `dim` (1: a row, 0: a column).
// Nothing to normalise (no rows for dim 1, no columns for dim 0) is fine: the
// result is empty.
void check_norm_args(const char* op, Var x, Var gamma, const Var* beta, double eps, int dim,
                     arma::uword min_count) {
  const arma::mat& v = x.value();
  const std::string shapes = "x is " + shape_str(v);
  auto check_row = [&](const char* name, Var p) {
    if (p.rows() != 1 || p.cols() != v.n_cols) {
      throw Error(std::string(op) + ": " + name + " must be " + shape_str(1, v.n_cols) +
                  " (one value per column of x; " + shapes + "), got " + p.shape());
    }
  };
  check_row("gamma", gamma);
  if (beta != nullptr) check_row("beta", *beta);
  if (!(eps > 0) || !std::isfinite(eps)) {
    std::ostringstream got;  // %g-style: -1e-09 must not print as -0.000000
    got << eps;
    throw Error(std::string(op) + ": eps must be a positive number, got " + got.str());
  }
  const arma::uword count = dim == 1 ? v.n_cols : v.n_rows;
  if (count < min_count) {
    const char* what = dim == 0        ? " samples (rows) per column"
                       : min_count == 1 ? " feature (column) per row"
                                        : " features (columns) per row";
    throw Error(std::string(op) + ": needs at least " + std::to_string(min_count) + what +
                " to normalise over; " + shapes);
  }
}

// mean(x) along dim; Centring::Corrected adds back its rounding error (see layernorm.h).
Var centre(Var x, int dim, Centring centring) {
  Var first = mean(x, dim);
  if (centring == Centring::Plain) return first;
  return first + mean(x - first, dim);
}

// (x - mean) / sqrt(var + eps) * gamma + beta along dim, one primitive per step,
// in the tutorials' order (mean, then variance): mean, var(unbiased=False), (x - mean) / sqrt(var + eps), gamma * xhat + beta.
NormSteps normalise_composed(Var x, Var gamma, Var beta, double eps, int dim, Centring centring) {
  NormSteps s;
  Var mu = centre(x, dim, centring);          // N x 1 per row (dim 1), 1 x D per column (dim 0)
  Var variance = var(x, dim, false);          // biased: divide by the count, not count - 1
  Var diff = x - mu;                          // broadcast: each row (column) minus its mean
  Var variance_eps = variance + eps;          // eps inside the square root
  Var stdev = sqrt(variance_eps);
  s.xhat = diff / stdev;
  Var scaled = s.xhat * gamma;                // gamma, beta: 1 x D, broadcast down the rows
  s.y = scaled + beta;
  s.steps = {{"mean", mu},
             {"variance", variance},
             {"x - mean", diff},
             {"variance + eps", variance_eps},
             {"std = sqrt(variance + eps)", stdev},
             {"normalised = (x - mean) / std", s.xhat},
             {"gamma * normalised", scaled},
             {"y = gamma * normalised + beta", s.y}};
  return s;
}

}  // namespace

// ---- LayerNorm, composed: the tape derives the backward ---------------------

// Composed: no node carries these names; forward mode runs through their ops' rules.
const OpDef& layernorm_composed_def() {
  static const OpDef def = composed_op("layernorm_composed", 3, "y = (x - mean) / sqrt(var + eps) * g + b, per row",
                                       "derived by the tape from the primitives it records (mean, var, sub, "
                                       "add_scalar, sqrt, div, mul, add)");
  return def;
}

// Each row; var biased (divide by D).
NormSteps layernorm_composed_steps(Var x, Var gamma, Var beta, double eps, Centring centring) {
  check_norm_args(layernorm_composed_def().name, x, gamma, &beta, eps, 1, 2);
  return normalise_composed(x, gamma, beta, eps, -1, centring);
}

Var layernorm_composed(Var x, Var gamma, Var beta, double eps, Centring centring) {
  return layernorm_composed_steps(x, gamma, beta, eps, centring).y;
}

// ---- LayerNorm, fused: one node, handwritten backward -----------------------
// The kernels (forward, and llm.c's backward term by term) are in ops/norm_kernels.cpp.

namespace {
// The tangent, term by term like the backward, with ag ops so it is
// differentiable in turn: rstd and xhat recomputed from x, not saved.
Var layernorm_tangent(const JvpArgs& j) {
  const Var x = j.x[0], gamma = j.x[1], dx = j.dx[0];
  const Var rstd = pow_scalar(var(x, 1) + attribute(j.node, "eps"), -0.5);
  const Var xhat = (x - mean(x, 1)) * rstd;
  const Var dxhat = rstd * (dx - mean(dx, 1) - xhat * mean(xhat * dx, 1));  // through the normalisation
  return gamma * dxhat      // through x
         + j.dx[1] * xhat   // through gamma
         + j.dx[2];         // through beta
}
}  // namespace

const OpDef& layernorm_fused_def() {
  static const OpDef def{"layernorm_fused", 3, "y = (x - mean) * rstd * g + b, per row (one node)",
                         "dx = rstd (dxhat - mean(dxhat) - xhat mean(dxhat xhat)), dxhat = dy g; dg = sum dy xhat; "
                         "db = sum dy",
                         "dy = g rstd (dx - mean(dx) - xhat mean(xhat dx)) + dg xhat + db", layernorm_tangent};
  return def;
}

// rstd = 1 / sqrt(var + eps); saves mean and rstd (its backward reads x and
// gamma from its inputs' values on the tape).
Var layernorm_fused(Var x, Var gamma, Var beta, double eps) {
  const OpDef& def = layernorm_fused_def();
  Tape& t = tape_of(def.name, x, gamma);
  tape_of(def.name, x, beta);
  check_norm_args(def.name, x, gamma, &beta, eps, 1, 2);
  arma::vec mean, rstd;
  arma::mat y;
  kernels::layernorm_forward(x.value(), gamma.value(), beta.value(), eps, mean, rstd, y);
  const std::size_t bytes = (mean.n_elem + rstd.n_elem) * sizeof(double);
  Var out = t.record(
      def, {x, gamma, beta}, std::move(y),
      [mean = std::move(mean), rstd = std::move(rstd)](Tape& t, const Node& n) {
        const arma::mat& x = t.value(n.inputs[0]);
        const arma::uword D = x.n_cols;
        kernels::NormGrads g{arma::mat(), arma::mat(1, D, arma::fill::zeros), arma::mat(1, D, arma::fill::zeros)};
        if (t.node(n.inputs[0]).requires_grad) g.dx.set_size(x.n_rows, D);
        kernels::layernorm_backward(x, t.value(n.inputs[1]), n.grad, mean, rstd, g);
        if (!g.dx.is_empty()) t.accumulate(n.inputs[0], std::move(g.dx));  // moved: no N x D copy
        t.accumulate(n.inputs[1], std::move(g.dgamma));
        t.accumulate(n.inputs[2], std::move(g.dbeta));
      },
      Saved{{x, gamma}, false, bytes});
  t.set_attribute(out, "eps", eps);  // the per-node check replays the forward with it
  return out;
}

// ---- RMSNorm, composed ------------------------------------------------------

const OpDef& rmsnorm_composed_def() {
  static const OpDef def = composed_op("rmsnorm_composed", 2, "y = x / sqrt(mean(x^2) + eps) * g, per row",
                                       "derived by the tape from square, mean, add_scalar, sqrt, div, mul");
  return def;
}

// Each row: no centring, no beta.
NormSteps rmsnorm_composed_steps(Var x, Var gamma, double eps) {
  check_norm_args(rmsnorm_composed_def().name, x, gamma, nullptr, eps, 1, 1);
  NormSteps s;
  Var squares = square(x);
  Var mean_square = mean(squares, -1);    // N x 1
  Var mean_square_eps = mean_square + eps;
  Var rms = sqrt(mean_square_eps);
  s.xhat = x / rms;
  s.y = s.xhat * gamma;
  s.steps = {{"x^2", squares},
             {"mean(x^2)", mean_square},
             {"mean(x^2) + eps", mean_square_eps},
             {"rms = sqrt(mean(x^2) + eps)", rms},
             {"normalised = x / rms", s.xhat},
             {"y = gamma * normalised", s.y}};
  return s;
}

Var rmsnorm_composed(Var x, Var gamma, double eps) { return rmsnorm_composed_steps(x, gamma, eps).y; }

// ---- RMSNorm, fused ---------------------------------------------------------

namespace {
// As LayerNorm's, without the centring and beta.
Var rmsnorm_tangent(const JvpArgs& j) {
  const Var x = j.x[0], gamma = j.x[1], dx = j.dx[0];
  const Var rstd = pow_scalar(mean(square(x), 1) + attribute(j.node, "eps"), -0.5);
  const Var xhat = x * rstd;
  const Var dxhat = rstd * (dx - xhat * mean(xhat * dx, 1));  // through the normalisation
  return gamma * dxhat      // through x
         + j.dx[1] * xhat;  // through gamma
}
}  // namespace

const OpDef& rmsnorm_fused_def() {
  static const OpDef def{"rmsnorm_fused", 2, "y = x * rstd * g, per row (one node)",
                         "dx = rstd (dxhat - xhat mean(dxhat xhat)), dxhat = dy g; dg = sum dy xhat",
                         "dy = g rstd (dx - xhat mean(xhat dx)) + dg xhat", rmsnorm_tangent};
  return def;
}

// rstd = 1 / sqrt(mean(x^2) + eps); saves rstd only.
Var rmsnorm_fused(Var x, Var gamma, double eps) {
  const OpDef& def = rmsnorm_fused_def();
  Tape& t = tape_of(def.name, x, gamma);
  check_norm_args(def.name, x, gamma, nullptr, eps, 1, 1);
  arma::vec rstd;
  arma::mat y;
  kernels::rmsnorm_forward(x.value(), gamma.value(), eps, rstd, y);
  const std::size_t bytes = rstd.n_elem * sizeof(double);
  Var out = t.record(
      def, {x, gamma}, std::move(y),
      [rstd = std::move(rstd)](Tape& t, const Node& n) {
        const arma::mat& x = t.value(n.inputs[0]);
        kernels::NormGrads g{arma::mat(), arma::mat(1, x.n_cols, arma::fill::zeros), arma::mat()};
        if (t.node(n.inputs[0]).requires_grad) g.dx.set_size(arma::size(x));
        kernels::rmsnorm_backward(x, t.value(n.inputs[1]), n.grad, rstd, g);
        if (!g.dx.is_empty()) t.accumulate(n.inputs[0], std::move(g.dx));  // moved: no N x D copy
        t.accumulate(n.inputs[1], std::move(g.dgamma));
      },
      Saved{{x, gamma}, false, bytes});
  t.set_attribute(out, "eps", eps);  // the per-node check replays the forward with it
  return out;
}

// ---- BatchNorm (training mode), composed --------------------------------------

const OpDef& batchnorm_composed_def() {
  static const OpDef def = composed_op("batchnorm_composed", 3,
                                       "y = (x - mean) / sqrt(var + eps) * g + b, per column (training mode)",
                                       "derived by the tape from the same primitives along dim 0");
  return def;
}

// Each COLUMN: statistics over the batch.
Var batchnorm_composed(Var x, Var gamma, Var beta, double eps, Centring centring) {
  check_norm_args(batchnorm_composed_def().name, x, gamma, &beta, eps, 0, 2);
  return normalise_composed(x, gamma, beta, eps, 0, centring).y;
}

}  // namespace ag
