// The grading of a JVP exercise (exercise.spec: kind = jvp). The student
// writes the forward-mode tangent dy = J v of the spec's forward; the child is
// sent the inputs and one tangent set per input (that input's tangent v_k, the
// others zero), and answers one tangent of y per set, so that a wrong term is
// located: the dx term, the dgamma term or the dbeta term.
//
// Each answer J_k v_k is checked twice, one point each:
//   transpose    <u, yours> = <J_k^T u, v_k> for three random u, where J^T u is
//                the trusted reference VJP (the tape's own backward of the same
//                forward, kit::exact_gradients), to the spec's tolerance (1e-13) of the Cauchy-Schwarz
//                size |u| |J v| + |J^T u| |v|: closer than finite differences come;
//   differences  yours against central differences of the forward along v_k,
//                (f(x + h v) - f(x - h v)) / 2h, to 1e-6 of their largest element:
//                a second opinion that trusts nothing but the forward.
// A wrong answer is diagnosed against the exact J_k v_k (rebuilt from the VJP,
// one element at a time) and named by the exercise's hints (kit/jvp_hints.h).
#pragma once

#include <string>
#include <vector>

#include "assignments/kit/grader.h"

namespace kit {

// The two rows (transpose, differences) of each tangent input of one case.
std::vector<GradeRow> jvp_rows(const Exercise& ex, const DrawnCase& c, const Answer& a, const std::string& why);

// The exact J_k v_k of case c for input k: element i is <e_i, J v> = <J^T e_i, v>, by the reference VJP.
arma::mat exact_jvp(const Exercise& ex, const DrawnCase& c, std::size_t k);

// The transpose identity's worst relative gap over the case's u, for the answer `yours` to
// tangent k whose exact value is `expected` (infinite when yours has the wrong shape or is not finite).
double transpose_gap(const Exercise& ex, const DrawnCase& c, std::size_t k, const arma::mat& yours,
                     const arma::mat& expected);

// Central differences of the forward along input k's tangent, step h.
arma::mat difference_jvp(const Exercise& ex, const DrawnCase& c, std::size_t k, double h = 1e-5);

}  // namespace kit
