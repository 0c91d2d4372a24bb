// The one exception type of the library (tape.h adds AnomalyError).
#pragma once

#include <stdexcept>

namespace ag {

// Thrown for every misuse: the message names the op, the shapes, what was expected.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace ag
