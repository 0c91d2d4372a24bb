// The exceptions of the library: every error it throws is an ag::Error.
#pragma once

#include <stdexcept>

namespace ag {

// Thrown for every misuse: the message names the op, the shapes, what was expected.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Anomaly mode: the first NaN/inf produced in forward or backward.
struct AnomalyError : Error {
  using Error::Error;
};

}  // namespace ag
