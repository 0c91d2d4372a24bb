// Writing a file so that nothing is ever half-written: every file the program
// writes (checkpoints, metrics, reports, rendered lessons, grades) goes through here.
#pragma once

#include <string>

#include "autograd/error.h"  // DataError

namespace ag {

// Writes atomically: a temporary file created exclusively in the same folder,
// renamed over `path` only once it is complete, so a full disk or a killed run
// leaves the old file whole. A FIFO or a character device (or a link to one,
// such as /dev/stdout) is written in place; any other symlink, a directory or
// another non-regular file is refused with a DataError naming it, never replaced.
void write_file_atomic(const std::string& path, const std::string& contents);

}  // namespace ag
