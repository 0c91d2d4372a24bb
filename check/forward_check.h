// Checks that tie forward mode to reverse mode and to finite differences,
// for whole functions (an op-table row, a composite, a module's forward):
//
//   transpose identity  <u, J v> from one tangent pass = <J^T u, v> from one
//                       backward, for random u and v: exact up to rounding, no
//                       finite differences, so it sees errors far below their
//                       resolution (a JVP off by 1e-9 relative fails it)
//   JVP against FD      J v against (f(x + eps v) - f(x - eps v)) / 2 eps
//   HVP against FD      H v (reverse-over-forward) against the central
//                       difference of the gradient along v
//   Hessian symmetry    H from n HVPs equals its transpose, to rounding
//
// A non-scalar f is made scalar for second order as gradcheck does: <w, f(x)>
// with fixed random weights w. The relative error of the transpose identity is
// |<u, J v> - <J^T u, v>| / S, S the size of the terms before they cancel, in
// both passes: f's nodes' tangents against their adjoints in <u, f>, the nodes
// the JVP rules recorded against their adjoints in <u, J v>, and the share each
// node's backward sends into an input against that input's tangent. Rounding
// at any of them moves the result by a few ulps of its term, so a correct op is
// never held to an impossible standard, even where J nearly vanishes (|u| |J v|
// + |J^T u| |v|, the ends alone, was a million times too small for a softmax of
// inputs tens apart, and 1e16 times for div(v, v)), while a rule 1e-9 off still
// fails (its error is 1e-9 of some terms, S a few dozen of them). S is never
// below the ends' scale.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "autograd/gradcheck.h"

namespace ag {

struct TransposeReport {
  double forward = 0;    // <u, J v>
  double reverse = 0;    // <J^T u, v>
  double scale = 0;      // sum over both passes' nodes of <|adjoint|, |value|>: the terms before they cancel
  double rel_error = 0;  // |forward - reverse| / scale (0 when both sides vanish)
  bool passed = true;
};
TransposeReport transpose_identity(const TapeFunction& f, const std::vector<arma::mat>& inputs,
                                   std::uint64_t seed, double tolerance = 1e-12);

// A derivative along a random direction against its central difference.
struct DirectionalReport {
  arma::mat analytic, numeric;  // J v or H v (inputs joined, as a column), and the difference quotient
  double max_abs_error = 0, max_rel_error = 0;
  bool passed = true;           // |analytic - numeric| <= atol + rtol |numeric| everywhere
};
DirectionalReport jvp_against_fd(const TapeFunction& f, const std::vector<arma::mat>& inputs,
                                 const GradcheckOptions& options = {});
DirectionalReport hvp_against_fd(const TapeFunction& f, const std::vector<arma::mat>& inputs,
                                 const GradcheckOptions& options = {});

struct SymmetryReport {
  double max_asymmetry = 0;  // max |H - H^T|
  double max_abs = 0;        // max |H|
  bool passed = true;        // max_asymmetry <= tolerance * max(max_abs, 1)
};
SymmetryReport hessian_symmetry(const TapeFunction& f, const std::vector<arma::mat>& inputs,
                                const GradcheckOptions& options = {}, double tolerance = 1e-10);

// f made scalar: <w, f(x)> with w drawn once from `seed` (uniform in [-1, 1], f's output shape).
TapeFunction scalarised(const TapeFunction& f, const std::vector<arma::mat>& inputs, std::uint64_t seed);

// Every check of one order on one function, as `autograd gradcheck --mode/--order` prints them.
struct ForwardCheck {
  TransposeReport transpose;
  DirectionalReport jvp, hvp;  // hvp and symmetry only at order 2
  SymmetryReport symmetry;
  bool passed = true;
  std::string summary() const;  // one line per check that ran
};
ForwardCheck check_forward(const TapeFunction& f, const std::vector<arma::mat>& inputs, int order,
                           const GradcheckOptions& options = {});

}  // namespace ag
