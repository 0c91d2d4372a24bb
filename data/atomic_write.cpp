#include "data/atomic_write.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace ag {

namespace {

// Writes all of `contents` to fd; false (errno set) when the disk is full or the write fails.
bool write_all(int fd, const std::string& contents) {
  std::size_t done = 0;
  while (done < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) {
      errno = ENOSPC;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// A FIFO or a terminal (--output-file /dev/stdout) is written in place: there
// is nothing to replace atomically, and replacing it would be wrong.
void write_in_place(const std::string& path, const std::string& contents) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) throw DataError(path + ": cannot write (" + std::strerror(errno) + ")");
  const bool ok = write_all(fd, contents);
  const int err = errno;
  ::close(fd);
  if (!ok) throw DataError(path + ": cannot write (" + std::strerror(err) + ")");
}

}  // namespace

void write_file_atomic(const std::string& path, const std::string& contents) {
  struct stat existing {};
  if (::lstat(path.c_str(), &existing) == 0 && !S_ISREG(existing.st_mode)) {
    // /dev/stdout is a link to a pipe or a terminal: what it points at decides.
    struct stat pointed {};
    const bool stream = ::stat(path.c_str(), &pointed) == 0 && (S_ISFIFO(pointed.st_mode) || S_ISCHR(pointed.st_mode));
    if (stream) return write_in_place(path, contents);
    const char* what = S_ISLNK(existing.st_mode) ? "a symbolic link" : S_ISDIR(existing.st_mode) ? "a directory"
                                                                                                  : "not a regular file";
    throw DataError(path + ": cannot write: it is " + std::string(what) + ", which is left alone (name a plain file)");
  }
  const std::filesystem::path target(path);
  const std::filesystem::path folder = target.has_parent_path() ? target.parent_path() : ".";
  // The temporary's name must fit where the target's does (255 bytes): a long name is cut.
  std::string temp = (folder / ("." + target.filename().string().substr(0, 200) + ".tmp.XXXXXX")).string();
  const int fd = ::mkstemp(temp.data());  // O_CREAT | O_EXCL: never an existing file or a planted link
  if (fd < 0) throw DataError(path + ": cannot write (" + std::strerror(errno) + ")");
  // mkstemp makes the file 0600; give it the mode a plain open() would.
  const mode_t mask = ::umask(022);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  bool ok = write_all(fd, contents);
  int err = errno;
  if (ok && ::fsync(fd) != 0) {
    ok = false;
    err = errno;
  }
  ::close(fd);
  if (ok && std::rename(temp.c_str(), path.c_str()) != 0) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    std::remove(temp.c_str());
    throw DataError(path + ": cannot write (" + std::strerror(err) + ")");
  }
}

}  // namespace ag
