#include "cli/run_folder.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "cli/cli.h"
#include "data/atomic_write.h"

namespace cli {

namespace fs = std::filesystem;

namespace {

const char* const kStagingPrefix = ".autograd-run-";
const char* const kCommitMark = "COMMIT";

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// Moves the outputs of a staging folder into `dir`: the ones it holds are
// renamed in, the ones the COMMIT mark lists but it lacks are removed.
void roll_forward(const fs::path& staging, const fs::path& dir) {
  std::ifstream mark(staging / kCommitMark);
  for (std::string name; std::getline(mark, name);) {
    if (name.empty() || name.find('/') != std::string::npos) continue;
    std::error_code ec;
    if (fs::exists(staging / name, ec)) {
      fs::rename(staging / name, dir / name);
    } else {
      fs::remove(dir / name, ec);
    }
  }
}

// ".model.ckpt.tmp.AB12cd": a temporary ag::write_file_atomic had not renamed yet.
bool is_atomic_write_temporary(const std::string& name) {
  const std::string mark = ".tmp.";
  if (name.size() < 1 + mark.size() + 6 || name[0] != '.') return false;
  const std::size_t at = name.size() - 6 - mark.size();
  if (name.compare(at, mark.size(), mark) != 0) return false;
  for (std::size_t i = name.size() - 6; i < name.size(); ++i) {
    if (!std::isalnum(static_cast<unsigned char>(name[i]))) return false;
  }
  return true;
}

// What an earlier run left when it was killed: a staging folder (finished if
// it was committing, else deleted) and the temporaries of the older writers.
void recover(const fs::path& dir, const std::vector<std::string>& outputs) {
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    std::error_code ec;
    if (starts_with(name, kStagingPrefix) && e.is_directory(ec)) {
      if (fs::exists(e.path() / kCommitMark, ec)) roll_forward(e.path(), dir);
      fs::remove_all(e.path(), ec);
      continue;
    }
    // ag::write_file_atomic's ".NAME.tmp.XXXXXX", a plot's ".autograd-plot-XXXXXX",
    // and what older versions left: "curves.png.tmp-PID.png", ".autograd-write-test".
    bool stale = is_atomic_write_temporary(name) || starts_with(name, ".autograd-plot-") ||
                 name == ".autograd-write-test";
    for (const std::string& out : outputs) stale = stale || starts_with(name, out + ".tmp-");
    if (stale) fs::remove_all(e.path(), ec);
  }
}

// Outputs are replaced by rename, which would replace a symlink or a FIFO
// rather than write through it: anything but a regular file is refused instead.
void refuse_special_outputs(const std::string& dir, const std::vector<std::string>& outputs) {
  for (const std::string& out : outputs) {
    struct stat st {};
    if (::lstat((fs::path(dir) / out).c_str(), &st) != 0 || S_ISREG(st.st_mode)) continue;
    const char* what = S_ISLNK(st.st_mode) ? "a symbolic link" : S_ISDIR(st.st_mode) ? "a directory"
                       : S_ISFIFO(st.st_mode) ? "a FIFO" : "not a regular file";
    throw UsageError("--out '" + dir + "': " + out + " there is " + what +
                     ", which a run never replaces or writes through (remove it or choose another folder)");
  }
}

}  // namespace

RunFolder::RunFolder(std::string dir, std::vector<std::string> outputs)
    : dir_(std::move(dir)), outputs_(std::move(outputs)) {
  std::error_code ec;
  created_ = !fs::exists(dir_, ec);
  fs::create_directories(dir_, ec);
  if (ec || !fs::is_directory(dir_)) {
    throw UsageError("--out '" + dir_ + "': cannot create the directory (" + (ec ? ec.message() : "a file is in the way") + ")");
  }
  const std::string lock = (fs::path(dir_) / ".autograd.lock").string();
  lock_fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (lock_fd_ < 0) {
    throw UsageError("--out '" + dir_ + "': the directory is not writable (" + std::strerror(errno) + ")");
  }
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    ::close(lock_fd_);
    lock_fd_ = -1;
    throw UsageError("--out '" + dir_ + "': another autograd run is writing there; wait for it or choose another folder");
  }
  try {
    refuse_special_outputs(dir_, outputs_);  // before any work: the run would end refused
    recover(dir_, outputs_);
  } catch (const fs::filesystem_error& e) {
    throw UsageError("--out '" + dir_ + "': cannot clean up after an earlier run (" + e.code().message() + ")");
  }
  std::string pattern = (fs::path(dir_) / (std::string(kStagingPrefix) + "XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw UsageError("--out '" + dir_ + "': the directory is not writable (" + std::strerror(errno) + ")");
  }
  staging_ = pattern;
}

RunFolder::~RunFolder() {
  std::error_code ec;
  if (!staging_.empty()) fs::remove_all(staging_, ec);
  if (created_ && !committed_) {
    fs::remove(fs::path(dir_) / ".autograd.lock", ec);
    fs::remove(dir_, ec);  // only if empty
  }
  if (lock_fd_ >= 0) ::close(lock_fd_);  // closing releases the flock
}

std::string RunFolder::staged(const std::string& name) const { return (fs::path(staging_) / name).string(); }

void RunFolder::write(const std::string& name, const std::string& contents) const {
  produce(name, [&](const std::string& path) { ag::write_file_atomic(path, contents); });
}

void RunFolder::produce(const std::string& name, const std::function<void(const std::string& path)>& write) const {
  try {
    write(staged(name));
  } catch (const ag::DataError& e) {
    std::string message = e.what();
    const std::string hidden = staged(name), shown = (fs::path(dir_) / name).string();
    if (const std::size_t at = message.find(hidden); at != std::string::npos) message.replace(at, hidden.size(), shown);
    throw ag::DataError(message);
  }
}

std::vector<std::string> RunFolder::commit() {
  // Every rename must be able to succeed before the first one is made.
  refuse_special_outputs(dir_, outputs_);
  std::string names;
  for (const std::string& out : outputs_) names += out + "\n";
  ag::write_file_atomic(staged(kCommitMark), names);  // from here on the run counts as done
  std::vector<std::string> moved;
  for (const std::string& out : outputs_) {
    if (fs::exists(staged(out))) moved.push_back((fs::path(dir_) / out).string());
  }
  roll_forward(staging_, dir_);
  std::error_code ec;
  fs::remove_all(staging_, ec);
  staging_.clear();
  committed_ = true;
  return moved;
}

}  // namespace cli
