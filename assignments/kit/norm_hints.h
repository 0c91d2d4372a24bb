// Hints that name the real mistake in a norm backward. The diagnosis of
// check/diagnose.h knows shapes, signs and constant factors; a LayerNorm dx
// with its mean term missing is none of those. So each gradient is also
// compared with the usual wrong backwards, rebuilt from the case's inputs
// (a missing term, a flipped sign, gamma forgotten, the unbiased variance,
// `=` where `+=` belongs ...), and checked for the properties the true dx
// has: its rows sum to zero, and each row is orthogonal to xhat up to
// dx . xhat = rstd eps/(var+eps) (dxhat . xhat), far below the check's tolerance.
#pragma once

#include <string>

#include "assignments/kit/exercise.h"
#include "check/diagnose.h"

namespace kit {

// The hint for a variance divided by D-1 where the forward divides by D: the
// backward's hints and the JVP's (kit/jvp_hints.h) name it the same way.
extern const char* const kUnbiasedVarianceHint;

struct NormHint {
  std::string result;  // the result column: "missing mean term"
  std::string hint;    // the sentence under the row
};

// A better name for the mistake in input k's gradient `yours`, or an empty
// result when the exercise has no such hints or none fits.
NormHint norm_hint(const ExerciseSpec& spec, const DrawnCase& c, std::size_t k, const arma::mat& yours,
                   const ag::Diagnosis& d);

}  // namespace kit
