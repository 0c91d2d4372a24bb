// The library's errors: every exception it throws on purpose is an ag::Error
// (AnomalyError and DataError here, train/trainer.h's TrainingDiverged, the
// grader's GraderError), so a user catches ag::Error and knows it is the library's.
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

// Bad input data (a file, a cell, a matrix literal, a path that cannot be read
// or written): the message names the file and what is wrong with it. The
// `autograd` program exits with status 2 for it, 1 for any other Error.
struct DataError : Error {
  using Error::Error;
};

}  // namespace ag
