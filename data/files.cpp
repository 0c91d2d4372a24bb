#include "data/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "autograd/error.h"

namespace ag {

namespace {

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (a named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

void refuse_special(const std::string& path, const std::string& kind, mode_t mode) {
  if (!S_ISREG(mode)) throw DataError(path + ": is " + kind_of(mode) + ", not a " + kind + " file");
}

// Closes the descriptor however the reading ends.
struct Descriptor {
  int fd;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

void require_regular_file(const std::string& path, const std::string& kind) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw DataError(path + ": cannot open the " + kind + " file (" + std::strerror(errno) + ")");
  refuse_special(path, kind, st.st_mode);
}

std::string read_regular_file(const std::string& path, const std::string& kind, std::uint64_t max_bytes) {
  require_regular_file(path, kind);
  const Descriptor file{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)};
  if (file.fd < 0) throw DataError(path + ": cannot open the " + kind + " file (" + std::strerror(errno) + ")");
  struct stat st {};
  if (::fstat(file.fd, &st) != 0) throw DataError(path + ": cannot read the " + kind + " file (" + std::strerror(errno) + ")");
  refuse_special(path, kind, st.st_mode);  // swapped between stat and open
  const std::uint64_t size = static_cast<std::uint64_t>(st.st_size);
  if (size > max_bytes) {
    throw DataError(path + ": " + std::to_string(size) + " bytes; a " + kind + " file is limited to " +
                    std::to_string(max_bytes >> 20) + " MiB");
  }
  std::string bytes(static_cast<std::size_t>(size), '\0');
  std::size_t got = 0;
  while (got < bytes.size()) {  // a file that shrinks ends early; one that grows is read to its first size
    const ssize_t n = ::read(file.fd, bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw DataError(path + ": cannot read the " + kind + " file (" + std::strerror(errno) + ")");
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  bytes.resize(got);
  return bytes;
}

}  // namespace ag
