// The usual mistakes of the exercises whose backward is not a norm's (those are
// kit/norm_hints.h): softmax, softmax cross-entropy, matmul with a bias, BatchNorm and
// the engine's reverse walk. check/diagnose.h sees most of them as "wrong everywhere" or a
// bare constant factor. Each wrong backward is rebuilt from the case's inputs and compared
// with the student's gradient; the first that matches names the row.
#pragma once

#include "assignments/kit/exercise.h"
#include "assignments/kit/norm_hints.h"

#include <string>
#include <vector>

namespace kit {

// The hints = names this file knows: softmax, cross_entropy, linear, batchnorm, engine.
const std::vector<std::string>& zoo_names();

// The mistake's name and hint for input k's gradient `yours`, or an empty result when the
// exercise has no zoo here or no mistake in it fits.
NormHint zoo_hint(const ExerciseSpec& spec, const DrawnCase& c, std::size_t k, const arma::mat& yours);

}  // namespace kit
