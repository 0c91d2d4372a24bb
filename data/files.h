// Reading files that may be hostile: a FIFO that never writes, /dev/zero that
// never ends, a directory, a file that grows while it is read. Everything is
// looked at with stat() before it is opened, so nothing but a regular file is
// ever opened for reading (coreutils' and git's care with what they read).
#pragma once

#include <cstdint>
#include <string>

namespace ag {

// Throws DataError "PATH: is a FIFO (a named pipe), not a KIND" (a directory, a
// character device, a block device, a socket) for anything but a regular file
// or a symbolic link to one, and "PATH: cannot open the KIND file (reason)" when
// there is nothing there. Never opens the file.
void require_regular_file(const std::string& path, const std::string& kind);

// require_regular_file, then the whole file, at most `max_bytes` (refused by
// size, naming the limit, before anything is read). Opened without blocking and
// checked again once open, so a file swapped for a FIFO in between is refused too.
std::string read_regular_file(const std::string& path, const std::string& kind, std::uint64_t max_bytes);

}  // namespace ag
