// Hints that name the usual mistakes of a softmax backward, dx = y * (dy - sum_j dy_j y_j)
// per row: check/diagnose.h sees only "wrong everywhere" in most of them. Each wrong
// backward is rebuilt from the case's y and dy and compared with the student's dx, as
// norm_hints.h does for the norms.
#pragma once

#include "assignments/kit/exercise.h"
#include "assignments/kit/norm_hints.h"

namespace kit {

// The mistake's name and hint for a softmax dx (spec.hints = softmax), or an empty result.
NormHint softmax_hint(const ExerciseSpec& spec, const DrawnCase& c, std::size_t k, const arma::mat& yours);

}  // namespace kit
