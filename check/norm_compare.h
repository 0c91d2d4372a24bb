// Composed vs fused vs finite differences, for LayerNorm (or RMSNorm) on one
// input: the evidence that the handwritten backward is right, and what each
// path costs on the tape.
//
// The "numeric" path is independent of both: a plain per-row forward in long
// double, differentiated by central differences (with one Richardson step, so
// it is good to ~1e-10 rather than ~1e-6). It needs O(N D^2) work; switch it
// off for big inputs.
#pragma once

#include <armadillo>

#include <string>
#include <vector>

namespace ag {

struct NormInputs {
  arma::mat x;      // N x D
  arma::mat gamma;  // 1 x D
  arma::mat beta;   // 1 x D (ignored for RMSNorm)
  arma::mat dy;     // N x D: the output gradient dL/dy
  double eps = 1e-5;
  bool rms = false;  // RMSNorm instead of LayerNorm
};

// One way of computing y and its gradients.
struct NormPath {
  std::string name;                 // "composed", "fused", "numeric"
  bool ran = false;
  arma::mat y, dx, dgamma, dbeta;   // dbeta empty for RMSNorm
  std::size_t nodes = 0;            // nodes the norm recorded (leaves not counted)
  std::size_t saved_bytes = 0;      // tape.saved_bytes() before backward released them
  std::string tape_listing;         // format_tape() before backward
  // The numeric path only: per element, how far its difference quotient can be
  // off from the rounding of L alone (a few ulps of L's terms, in long double,
  // divided by the step). Empty for the tape paths.
  arma::mat dx_resolution, dgamma_resolution, dbeta_resolution;
};

// The largest difference between two paths in one quantity. rel is max_abs
// divided by the larger of the two largest magnitudes (a norm-wise relative
// error, stable where single entries are near zero).
//
// Whether they agree: every element within 1e-6 of that larger magnitude, or
// 1e-9 (rounding around a true zero), plus the numeric path's resolution
// there. A finite difference of L ~ 1e20 in beta cannot resolve a dbeta ~ 1,
// so its allowance follows L's scale and a correct backward is not reported
// broken; at ordinary scales the allowance is ~1e-15 and a real error is seen.
struct NormDiff {
  std::string quantity;  // "y", "dx", "dgamma", "dbeta"
  std::string a, b;      // path names
  double max_abs = 0, max_rel = 0;
  double scale = 0;       // the larger of the two largest magnitudes
  double resolution = 0;  // the numeric path's largest allowance in this quantity (0: none compared)
  bool agrees = true;
};

struct NormComparison {
  NormPath composed, fused, numeric;
  std::vector<NormDiff> diffs;  // composed-fused, composed-numeric, fused-numeric per quantity
  double worst_rel(const std::string& a, const std::string& b) const;
};

// a against b in each quantity (y, dx, dgamma[, dbeta]), as compare_norm does.
std::vector<NormDiff> compare_paths(const NormPath& a, const NormPath& b, bool rms);

// Throws ag::Error (from the ops) for bad shapes or eps.
NormComparison compare_norm(const NormInputs& in, bool finite_differences = true);

// The independent reference: y in long double, two-pass per row.
arma::mat norm_reference(const NormInputs& in);

}  // namespace ag
