#include "assignments/kit/norm_hints.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace kit {

const char* const kUnbiasedVarianceHint =
    "Yours matches a variance divided by D-1 (unbiased, Armadillo's default var()); the forward divides by D.";

namespace {

// A wrong backward a student could have written, rebuilt for this case.
struct Variant {
  std::size_t input;  // whose gradient: 0 x, 1 gamma, 2 beta
  NormHint named;
  arma::mat value;
};

const char* kAccumulate =
    " holds only the last row's contribution: `=` where `+=` belongs in the loop over the rows"
    " (the parameter multiplies every row, so every row adds its part to the gradient).";

// rstd * (dxhat [- mean(dxhat)] - sign * xhat * mean(dxhat * xhat)), means per row.
arma::mat dx_formula(const arma::mat& dxhat, const arma::mat& xhat, const arma::vec& rstd, bool mean_term,
                     double sign) {
  arma::mat t = dxhat;
  if (mean_term) t.each_col() -= arma::mean(dxhat, 1);
  const arma::vec proj = arma::mean(dxhat % xhat, 1);
  t -= sign * (xhat.each_col() % proj);
  return t.each_col() % rstd;
}

// What every variant is built from, recomputed from the case's inputs as the forward did.
struct Pieces {
  arma::mat centred, xhat, xhat_unbiased, dxhat;
  arma::vec rstd, rstd_unbiased;
};

Pieces pieces_of(const ExerciseSpec& s, const DrawnCase& c) {
  const arma::mat& x = c.inputs[0];
  const double d = double(x.n_cols);
  Pieces p;
  p.centred = s.hints == "layernorm" ? arma::mat(x.each_col() - arma::mean(x, 1)) : x;  // RMSNorm centres nothing
  const arma::vec ms = arma::mean(arma::square(p.centred), 1);
  p.rstd = 1.0 / arma::sqrt(ms + s.eps);
  p.rstd_unbiased = 1.0 / arma::sqrt(ms * d / (d - 1) + s.eps);
  p.xhat = p.centred.each_col() % p.rstd;
  p.xhat_unbiased = p.centred.each_col() % p.rstd_unbiased;
  p.dxhat = c.dy;
  p.dxhat.each_row() %= c.inputs[1];
  return p;
}

// The mistakes both norms share.
std::vector<Variant> shared_variants(const ExerciseSpec& s, const DrawnCase& c, const Pieces& p) {
  const bool layer = s.hints == "layernorm";
  const arma::mat& x = c.inputs[0];
  const arma::vec ones(x.n_rows, arma::fill::ones);
  const arma::uword last = x.n_rows - 1;
  return {
      {0, {"wrong sign, variance term", "The variance term has the wrong sign: it is subtracted, "
                                        "- xhat * mean(dxhat * xhat), so that each row of dx is orthogonal to xhat."},
       dx_formula(p.dxhat, p.xhat, p.rstd, layer, -1)},
      {0, {"gamma missing", "gamma is missing in dx: dxhat = dy * gamma (each row times gamma); "
                            "yours is the dx of gamma = 1."},
       dx_formula(c.dy, p.xhat, p.rstd, layer, 1)},
      {0, {"rstd missing", "The factor rstd = 1 / sqrt(var + eps) in front of dx is missing."},
       dx_formula(p.dxhat, p.xhat, ones, layer, 1)},
      {1, {"dgamma from x", "dgamma uses x; it must use the normalised xhat: dgamma = sum over rows of dy * xhat."},
       arma::sum(c.dy % x, 0)},
      {1, {"`=` for `+=`", "dgamma" + std::string(kAccumulate)}, c.dy.row(last) % p.xhat.row(last)},
  };
}

std::vector<Variant> layernorm_variants(const DrawnCase& c, const Pieces& p) {
  const arma::uword last = c.inputs[0].n_rows - 1;
  return {
      {0, {"missing mean term", "The rows of dx should sum to zero (adding a constant to a row of x "
                                "changes nothing), and yours do not: the mean term - mean(dxhat) is missing."},
       dx_formula(p.dxhat, p.xhat, p.rstd, false, 1)},
      {0, {"missing variance term", "dx should be orthogonal to xhat in each row (scaling a centred row "
                                    "changes nothing), and yours is not: the variance term "
                                    "- xhat * mean(dxhat * xhat) is missing."},
       dx_formula(p.dxhat, p.xhat, p.rstd, true, 0)},
      {0, {"unbiased variance", kUnbiasedVarianceHint}, dx_formula(p.dxhat, p.xhat_unbiased, p.rstd_unbiased, true, 1)},
      {1, {"unbiased variance", kUnbiasedVarianceHint}, arma::sum(c.dy % p.xhat_unbiased, 0)},
      {1, {"dgamma from x - mean", "dgamma uses x - mean without the factor rstd; it must use "
                                   "xhat = (x - mean) * rstd."},
       arma::sum(c.dy % p.centred, 0)},
      {2, {"`=` for `+=`", "dbeta" + std::string(kAccumulate)}, c.dy.row(last)},
  };
}

std::vector<Variant> rmsnorm_variants(const Pieces& p) {
  return {
      {0, {"LayerNorm's mean term", "RMSNorm subtracts no mean, so dx has no - mean(dxhat) term "
                                    "(that term is LayerNorm's)."},
       dx_formula(p.dxhat, p.xhat, p.rstd, true, 1)},
      {0, {"missing second term", "dx should be orthogonal to xhat in each row, and yours is not: "
                                  "the term - xhat * mean(dxhat * xhat) is missing."},
       dx_formula(p.dxhat, p.xhat, p.rstd, false, 0)},
  };
}

std::vector<Variant> variants(const ExerciseSpec& s, const DrawnCase& c) {
  const Pieces p = pieces_of(s, c);
  std::vector<Variant> v = shared_variants(s, c, p);
  const std::vector<Variant> own = s.hints == "layernorm" ? layernorm_variants(c, p) : rmsnorm_variants(p);
  v.insert(v.end(), own.begin(), own.end());
  if (c.inputs[0].n_rows == 1) {  // one row: `=` and `+=` give the same gradient
    v.erase(std::remove_if(v.begin(), v.end(), [](const Variant& w) { return w.named.result == "`=` for `+=`"; }),
            v.end());
  }
  return v;
}

// A constant factor that an unbiased variance produces: sqrt((D-1)/D), D/(D-1) ...
NormHint unbiased_factor(const ag::Diagnosis& d, double cols) {
  if (d.kind != ag::Mistake::ConstantFactor || cols < 2) return {};
  const double r = (cols - 1) / cols;
  const std::pair<double, const char*> named[] = {{std::sqrt(r), "sqrt((D-1)/D)"}, {1 / std::sqrt(r), "sqrt(D/(D-1))"},
                                                  {r, "(D-1)/D"}, {1 / r, "D/(D-1)"}};
  for (const auto& [value, text] : named) {
    if (std::abs(d.factor - value) < 1e-3 * value) {
      return {"unbiased variance", "Yours = " + std::string(text) + " x expected (D = " +
                                       std::to_string(int(cols)) + "): " + kUnbiasedVarianceHint};
    }
  }
  return {};
}

// What the true dx always satisfies, for a dx that matches no known mistake.
NormHint property_hint(const ExerciseSpec& s, const DrawnCase& c, const arma::mat& yours) {
  const arma::mat& x = c.inputs[0];
  if (arma::size(yours) != arma::size(x) || !yours.is_finite()) return {};
  const bool layer = s.hints == "layernorm";
  const arma::mat centred = layer ? arma::mat(x.each_col() - arma::mean(x, 1)) : x;
  const double scale = arma::abs(yours).max() + 1e-12;
  if (layer && arma::abs(arma::sum(yours, 1)).max() > 1e-4 * scale * x.n_cols) {
    return {"rows do not sum to 0", "The rows of dx should sum to zero (adding a constant to a row of x changes "
                                    "nothing), and yours do not: check the mean term - mean(dxhat)."};
  }
  const arma::vec dots = arma::sum(yours % centred, 1) / (arma::sqrt(arma::sum(arma::square(centred), 1)) + 1e-12);
  if (arma::abs(dots).max() > 1e-3 * scale * std::sqrt(double(x.n_cols))) {
    return {"not orthogonal to xhat", "dx should be orthogonal to xhat in each row (scaling a centred row changes "
                                      "nothing), and yours is not: check the term - xhat * mean(dxhat * xhat)."};
  }
  return {};
}

}  // namespace

NormHint norm_hint(const ExerciseSpec& s, const DrawnCase& c, std::size_t k, const arma::mat& yours,
                   const ag::Diagnosis& d) {
  if (s.hints != "layernorm" && s.hints != "rmsnorm") return {};
  for (const Variant& v : variants(s, c)) {
    if (v.input == k && ag::diagnose_gradient(yours, v.value).correct()) return v.named;
  }
  if (NormHint f = unbiased_factor(d, double(c.inputs[0].n_cols)); !f.result.empty()) return f;
  if (k == 0 && (d.kind == ag::Mistake::Unrecognised || d.kind == ag::Mistake::PartlyCorrect)) {
    return property_hint(s, c, yours);
  }
  return {};
}

}  // namespace kit
