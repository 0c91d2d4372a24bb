// Hints that name the real mistake in a LayerNorm JVP (exercise.spec: kind =
// jvp, hints = layernorm), as kit/norm_hints.h does for the backward. The
// tangent of y = gamma xhat + beta along (dx, dgamma, dbeta) is
//
//     dy = gamma rstd (dx - mean(dx) - xhat mean(xhat dx)) + dgamma xhat + dbeta,
//
// means per row. Each of its three terms is graded on its own (one tangent set
// per input), and each answer is compared with the wrong terms students write,
// rebuilt from the case's inputs: the mean's tangent or the variance's tangent
// forgotten, the variance term with the factor 2 or 1/2 of a half-done chain
// rule or the wrong sign, std where rstd belongs, rstd or gamma forgotten, the
// normalisation ignored, an unbiased variance, eps outside the square root or
// left out, dgamma times x instead of xhat, a term dropped, a 1 x D term not
// broadcast. A dx term that matches none is checked for what the true one
// satisfies: divided by gamma, its rows sum to zero and are (to eps) orthogonal to xhat.
#pragma once

#include <string>

#include "assignments/kit/exercise.h"
#include "assignments/kit/norm_hints.h"

namespace kit {

// A name and a hint for the mistake in the answer `yours` to input k's tangent (exact value
// `expected`), or an empty result when the exercise has no such hints or none fits.
NormHint jvp_hint(const ExerciseSpec& spec, const DrawnCase& c, std::size_t k, const arma::mat& yours,
                  const arma::mat& expected);

}  // namespace kit
