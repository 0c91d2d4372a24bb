#include "assignments/kit/jvp_hints.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace kit {

namespace {

// A wrong term a student could have written, rebuilt for this case.
struct Variant {
  std::size_t input;  // whose tangent: 0 dx, 1 dgamma, 2 dbeta
  NormHint named;
  arma::mat value;
};

const char* kEpsOutside = "Yours uses rstd = 1 / (sqrt(var) + eps): eps belongs inside the root, rstd = 1 / sqrt(var + eps).";
const char* kEpsMissing = "Yours uses rstd = 1 / sqrt(var), without eps: the forward takes 1 / sqrt(var + eps).";

// The statistics of one way of computing rstd: xhat = (x - mean) * rstd.
struct Norm {
  arma::vec rstd;
  arma::mat xhat;
};

// What every variant is built from, recomputed from the case's inputs as the forward did.
struct Pieces {
  arma::mat centred;
  arma::vec var;            // biased: divided by D
  Norm right, unbiased, eps_outside, eps_missing;
};

Norm norm_of(const arma::mat& centred, const arma::vec& rstd) { return {rstd, centred.each_col() % rstd}; }

Pieces pieces_of(const ExerciseSpec& s, const DrawnCase& c) {
  const arma::mat& x = c.inputs[0];
  const double d = double(x.n_cols);
  Pieces p;
  p.centred = x.each_col() - arma::mean(x, 1);
  p.var = arma::mean(arma::square(p.centred), 1);
  p.right = norm_of(p.centred, 1.0 / arma::sqrt(p.var + s.eps));
  p.unbiased = norm_of(p.centred, 1.0 / arma::sqrt(p.var * d / (d - 1) + s.eps));
  p.eps_outside = norm_of(p.centred, 1.0 / (arma::sqrt(p.var) + s.eps));
  p.eps_missing = norm_of(p.centred, 1.0 / arma::sqrt(p.var));
  return p;
}

// gamma * scale * (dx [- mean(dx)] - factor * xhat * mean(xhat * dx)), means and factors per row.
arma::mat dx_term(const arma::mat& dx, const arma::mat& gamma, const arma::mat& xhat, const arma::vec& scale,
                  bool mean_term, const arma::vec& factor) {
  arma::mat t = dx;
  if (mean_term) t.each_col() -= arma::mean(dx, 1);
  t -= xhat.each_col() % (factor % arma::mean(xhat % dx, 1));
  t.each_col() %= scale;
  t.each_row() %= gamma;
  return t;
}

Variant dx_variant(const char* result, const std::string& hint, const arma::mat& value) {
  return Variant{0, {result, hint}, value};
}

// The dx term's formula half-remembered: a term missing, a factor or a sign wrong.
std::vector<Variant> dx_formula_variants(const DrawnCase& c, const Pieces& p) {
  const arma::mat &v = c.tangents[0], &gamma = c.inputs[1], &xhat = p.right.xhat;
  const arma::vec& rstd = p.right.rstd;
  const arma::vec one(v.n_rows, arma::fill::ones), zero(v.n_rows, arma::fill::zeros);
  return {
      dx_variant("missing mean term", "The term - mean(dx) is missing: shifting a row of x by a constant moves "
                                      "neither xhat nor y, so the tangent must ignore a dx constant along a row.",
                 dx_term(v, gamma, xhat, rstd, false, one)),
      dx_variant("missing variance term", "The term - xhat * mean(xhat * dx), the tangent of rstd, is missing: "
                                          "rstd moves with x as the mean does.",
                 dx_term(v, gamma, xhat, rstd, true, zero)),
      dx_variant("mean and rstd held fixed", "Yours is gamma * rstd * dx, as if the mean and rstd were constants: "
                                             "both move with x, and their tangents give - mean(dx) and "
                                             "- xhat * mean(xhat * dx).",
                 dx_term(v, gamma, xhat, rstd, false, zero)),
      dx_variant("variance term x2", "The variance term is twice too large: dvar = 2 mean((x - mean) dx) and "
                                     "drstd = -1/2 rstd^3 dvar, so the 2 and the 1/2 cancel: - xhat * mean(xhat * dx).",
                 dx_term(v, gamma, xhat, rstd, true, 2 * one)),
      dx_variant("variance term x1/2", "The variance term is half as large as it should be: the 2 of d(x - mean)^2 "
                                       "and the 1/2 of d(1/sqrt) cancel, so keep both: - xhat * mean(xhat * dx).",
                 dx_term(v, gamma, xhat, rstd, true, 0.5 * one)),
      dx_variant("wrong sign, variance term", "The variance term has the wrong sign: rstd falls as the variance "
                                              "grows, so it is subtracted, - xhat * mean(xhat * dx).",
                 dx_term(v, gamma, xhat, rstd, true, -one)),
      dx_variant("normalisation ignored", "Yours is gamma * dx, the tangent of gamma * x + beta: differentiate "
                                          "xhat = (x - mean) * rstd too, dxhat = rstd (dx - mean(dx) - xhat "
                                          "mean(xhat dx)).",
                 dx_term(v, gamma, xhat, one, false, zero)),
  };
}

// The right formula with a wrong factor or statistic: std for rstd, rstd or gamma forgotten, the
// unbiased variance or eps misplaced (each both as the formula with that rstd and as its own exact tangent).
std::vector<Variant> dx_statistics_variants(const DrawnCase& c, const Pieces& p) {
  const arma::mat &v = c.tangents[0], &gamma = c.inputs[1], &xhat = p.right.xhat;
  const arma::vec& rstd = p.right.rstd;
  const arma::vec one(v.n_rows, arma::fill::ones);
  const double d = double(v.n_cols);
  const Norm &unbiased = p.unbiased, &outside = p.eps_outside, &missing = p.eps_missing;
  const arma::vec outside_factor = 1 / (outside.rstd % arma::sqrt(p.var));  // d/dx of 1 / (sqrt(var) + eps)
  return {
      dx_variant("std for rstd", "Yours multiplies by std = sqrt(var + eps) where rstd = 1 / sqrt(var + eps) belongs.",
                 dx_term(v, gamma, xhat, 1 / rstd, true, one)),
      dx_variant("rstd missing", "The factor rstd = 1 / sqrt(var + eps) in front of the dx term is missing.",
                 dx_term(v, gamma, xhat, one, true, one)),
      dx_variant("gamma missing", "gamma is missing in the dx term: y = gamma * xhat + beta, so its tangent holds "
                                  "gamma * dxhat.",
                 dx_term(v, arma::ones(arma::size(gamma)), xhat, rstd, true, one)),
      dx_variant("unbiased variance", kUnbiasedVarianceHint, dx_term(v, gamma, unbiased.xhat, unbiased.rstd, true, one)),
      dx_variant("unbiased variance", kUnbiasedVarianceHint, dx_term(v, gamma, unbiased.xhat, unbiased.rstd, true, d / (d - 1) * one)),
      dx_variant("eps outside the sqrt", kEpsOutside, dx_term(v, gamma, outside.xhat, outside.rstd, true, one)),
      dx_variant("eps outside the sqrt", kEpsOutside, dx_term(v, gamma, outside.xhat, outside.rstd, true, outside_factor)),
      dx_variant("eps missing", kEpsMissing, dx_term(v, gamma, missing.xhat, missing.rstd, true, one)),
  };
}

// The dgamma and dbeta terms: the wrong factor, or dropped.
std::vector<Variant> parameter_variants(const DrawnCase& c, const Pieces& p) {
  const arma::mat &x = c.inputs[0], &gamma = c.inputs[1], &dgamma = c.tangents[1], &dbeta = c.tangents[2];
  auto rows_times = [](arma::mat m, const arma::mat& row) {  // m (N x D), each row times `row`
    m.each_row() %= row;
    return m;
  };
  const arma::mat ones(arma::size(x), arma::fill::ones), zeros(arma::size(x), arma::fill::zeros);
  return {
      {1, {"dgamma times x", "The dgamma term uses x; it is dgamma * xhat, the normalised x (y = gamma * xhat + beta)."},
       rows_times(x, dgamma)},
      {1, {"dgamma times x - mean", "The dgamma term uses x - mean without the factor rstd: it is dgamma * xhat, "
                                    "xhat = (x - mean) * rstd."},
       rows_times(p.centred, dgamma)},
      {1, {"gamma twice", "The dgamma term is multiplied by gamma too: it is dgamma * xhat (gamma multiplies only dxhat)."},
       rows_times(rows_times(p.right.xhat, dgamma), gamma)},
      {1, {"unbiased variance", kUnbiasedVarianceHint}, rows_times(p.unbiased.xhat, dgamma)},
      {1, {"eps outside the sqrt", kEpsOutside}, rows_times(p.eps_outside.xhat, dgamma)},
      {1, {"eps missing", kEpsMissing}, rows_times(p.eps_missing.xhat, dgamma)},
      {1, {"dgamma term dropped", "The term dgamma * xhat is missing: y = gamma * xhat + beta moves when gamma does."},
       zeros},
      {2, {"dbeta term dropped", "The term dbeta is missing: beta is added to every row of y, and so is its tangent."},
       zeros},
      {2, {"dbeta times gamma", "The dbeta term is multiplied by gamma: beta is added after the scale, so its tangent "
                                "is dbeta itself, on every row."},
       rows_times(ones, dbeta % gamma)},
  };
}

bool matches(const arma::mat& yours, const arma::mat& variant, const arma::mat& expected) {
  if (arma::size(yours) != arma::size(variant) || !yours.is_finite()) return false;
  const double scale = std::max(arma::abs(variant).max(), arma::abs(expected).max());
  return arma::abs(yours - variant).max() <= 1e-9 * std::max(scale, 1e-300);
}

// What the true dx term satisfies, for one that matches no known mistake: divided by gamma it is
// dxhat, whose rows sum to zero and whose dot product with xhat is rstd D mean(xhat dx) eps / (var + eps).
NormHint property_hint(const DrawnCase& c, const arma::mat& yours) {
  const arma::mat& x = c.inputs[0];
  if (arma::size(yours) != arma::size(x) || !yours.is_finite()) return {};
  arma::mat dxhat = yours;
  dxhat.each_row() /= c.inputs[1];
  const arma::mat centred = x.each_col() - arma::mean(x, 1);
  const double scale = arma::abs(dxhat).max() + 1e-12;
  if (arma::abs(arma::sum(dxhat, 1)).max() > 1e-4 * scale * x.n_cols) {
    return {"rows do not sum to 0", "Your dx term divided by gamma should sum to zero along each row (xhat always "
                                    "does, so its tangent does too), and yours does not: check the term - mean(dx)."};
  }
  const arma::vec dots = arma::sum(dxhat % centred, 1) / (arma::sqrt(arma::sum(arma::square(centred), 1)) + 1e-12);
  if (arma::abs(dots).max() > 1e-3 * scale * std::sqrt(double(x.n_cols))) {
    return {"not orthogonal to xhat", "Your dx term divided by gamma should be orthogonal to xhat in each row "
                                      "(mean(xhat^2) stays 1 up to eps), and yours is not: check the term "
                                      "- xhat * mean(xhat * dx)."};
  }
  return {};
}

}  // namespace

NormHint jvp_hint(const ExerciseSpec& s, const DrawnCase& c, std::size_t k, const arma::mat& yours,
                  const arma::mat& expected) {
  if (s.hints != "layernorm" || c.tangents.size() != 3) return {};
  const Pieces p = pieces_of(s, c);
  std::vector<Variant> all = dx_formula_variants(c, p);
  for (const std::vector<Variant>& more : {dx_statistics_variants(c, p), parameter_variants(c, p)}) {
    all.insert(all.end(), more.begin(), more.end());
  }
  for (const Variant& v : all) {
    if (v.input == k && matches(yours, v.value, expected)) return v.named;
  }
  if (yours.n_rows == 1 && expected.n_rows > 1 && yours.n_cols == expected.n_cols) {
    return {"not broadcast", "Your tangent is 1 x D, but dy has the shape of y, N x D: the 1 x D terms "
                             "are added to every row."};
  }
  return k == 0 ? property_hint(c, yours) : NormHint{};
}

}  // namespace kit
