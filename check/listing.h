// Printing a tape: one line per node (id, op, inputs, shape, bytes saved for
// backward), the way a learner reads a Wengert list top to bottom. Nodes a
// forward-mode pass recorded (autograd/forward.h) read "tangent: <op>".
#pragma once

#include <string>

#include "autograd/tape.h"

namespace ag {

std::string format_tape(const Tape& tape);

// A matrix printed row by row with `precision` significant digits.
std::string format_matrix(const arma::mat& m, int precision = 4);

}  // namespace ag
