// A zip archive written by hand, its files stored as they are (no compression):
// the Gradescope autograder pack (assignments/grading/pack.h) is a few MB of
// source, so zlib's CRC-32 (already a dependency of this library) is all it
// needs, and no archive library joins the build. Written atomically
// (data/atomic_write.h): a temporary file renamed into place, never half-written.
#pragma once

#include <string>
#include <vector>

namespace ag {

struct ZipEntry {
  std::string name;      // the path inside the archive ("setup.sh", "autograd/cli/main.cpp"), '/' between folders
  std::string contents;  // the bytes, stored uncompressed
  bool executable = false;  // mode 0755 instead of 0644 (unzip and Gradescope keep it)
};

// The archive's bytes: a local header and the data per entry, the central
// directory, the end record. Times are 1980-01-01 00:00, so the same entries
// give the same bytes. Throws DataError for a name that is empty, absolute or
// holds "..", for two entries of one name, and past the classic format's limits
// (65535 entries, 4 GiB).
std::string zip_bytes(const std::vector<ZipEntry>& entries);

// zip_bytes written to `path` atomically; a folder at `path` is refused (DataError naming it).
void write_zip(const std::string& path, const std::vector<ZipEntry>& entries);

}  // namespace ag
