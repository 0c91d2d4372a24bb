#include "cli/run_folder.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
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
// renamed in, the ones the COMMIT mark lists but it lacks are removed (a file
// only: unlink never removes a directory).
void roll_forward(const fs::path& staging, const fs::path& dir) {
  std::ifstream mark(staging / kCommitMark);
  for (std::string name; std::getline(mark, name);) {
    if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") continue;
    std::error_code ec;
    if (fs::exists(staging / name, ec)) {
      fs::rename(staging / name, dir / name);
    } else {
      ::unlink((dir / name).c_str());
    }
  }
}

// The journal, DIR/.autograd.lock's text: the staging folders this program
// made in DIR, each with the inode mkdtemp gave it. Only what it lists is ever
// removed, so a user's file that merely looks like a temporary is never touched.
const char* const kJournalHeader = "autograd run folder journal 1";

struct JournalEntry {
  std::string name;
  unsigned long long device = 0, inode = 0;
};

// A name this program generates: the staging prefix and mkdtemp's 6 characters.
bool is_staging_name(const std::string& name) {
  const std::size_t prefix = std::strlen(kStagingPrefix);
  if (name.size() != prefix + 6 || !starts_with(name, kStagingPrefix)) return false;
  for (std::size_t i = prefix; i < name.size(); ++i) {
    if (!std::isalnum(static_cast<unsigned char>(name[i]))) return false;
  }
  return true;
}

std::vector<JournalEntry> read_journal(int fd, const std::string& dir) {
  std::string text(1 << 16, '\0');
  const ssize_t n = ::pread(fd, text.data(), text.size(), 0);
  text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  std::vector<JournalEntry> entries;
  if (text.empty()) return entries;  // a new lock, or one an older version left
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line) || line != kJournalHeader) {
    throw UsageError("--out '" + dir + "': .autograd.lock there is not an autograd lock (it holds other text); "
                     "move it away or choose another folder");
  }
  for (JournalEntry e; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string kind;
    if (fields >> kind >> e.name >> e.device >> e.inode && kind == "staging" && is_staging_name(e.name)) {
      entries.push_back(e);
    }
  }
  return entries;
}

void write_journal(int fd, const std::vector<JournalEntry>& entries) {
  std::string text = std::string(kJournalHeader) + "\n";
  for (const JournalEntry& e : entries) {
    text += "staging " + e.name + " " + std::to_string(e.device) + " " + std::to_string(e.inode) + "\n";
  }
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size()) ||
      ::fsync(fd) != 0) {
    throw ag::DataError("cannot write .autograd.lock (" + std::string(std::strerror(errno)) + ")");
  }
}

// The entry's folder is still the one this program made: a real directory
// (not a link) with the same device and inode.
bool still_ours(const fs::path& dir, const JournalEntry& e) {
  struct stat st {};
  return ::lstat((dir / e.name).c_str(), &st) == 0 && S_ISDIR(st.st_mode) &&
         static_cast<unsigned long long>(st.st_dev) == e.device && static_cast<unsigned long long>(st.st_ino) == e.inode;
}

// What an earlier run left when it was killed: its staging folders, finished if
// it was committing, else deleted. Returns the ones that could not be removed
// (they stay listed); the others are forgotten.
std::vector<JournalEntry> recover(const fs::path& dir, const std::vector<JournalEntry>& journal) {
  std::vector<JournalEntry> left;
  for (const JournalEntry& e : journal) {
    if (!still_ours(dir, e)) continue;  // gone, or replaced by someone else's
    std::error_code ec;
    if (fs::exists(dir / e.name / kCommitMark, ec)) roll_forward(dir / e.name, dir);
    fs::remove_all(dir / e.name, ec);
    if (ec) left.push_back(e);
  }
  return left;
}

// Takes a staging folder that is gone off the journal. Best effort: a name left
// listed is dropped by the next run, which finds no such folder.
void forget(int fd, const std::string& dir, const std::string& staging) noexcept {
  try {
    std::vector<JournalEntry> journal = read_journal(fd, dir);
    const std::string name = fs::path(staging).filename().string();
    journal.erase(std::remove_if(journal.begin(), journal.end(), [&](const JournalEntry& e) { return e.name == name; }),
                  journal.end());
    write_journal(fd, journal);
  } catch (const std::exception&) {
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

namespace {
// Creates `dir` if need be (`created` says whether it did) and takes its lock:
// the lock file's descriptor, held for the run. UsageError when another run holds it.
int lock_folder(const std::string& dir, bool& created) {
  std::error_code ec;
  created = !fs::exists(dir, ec);
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) {
    throw UsageError("--out '" + dir + "': cannot create the directory (" + (ec ? ec.message() : "a file is in the way") + ")");
  }
  const std::string lock = (fs::path(dir) / ".autograd.lock").string();
  const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) throw UsageError("--out '" + dir + "': the directory is not writable (" + std::strerror(errno) + ")");
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    throw UsageError("--out '" + dir + "': another autograd run is writing there; wait for it or choose another folder");
  }
  return fd;
}
}  // namespace

RunFolder::RunFolder(std::string dir, std::vector<std::string> outputs)
    : dir_(std::move(dir)), outputs_(std::move(outputs)) {
  lock_fd_ = lock_folder(dir_, created_);
  std::vector<JournalEntry> journal;
  try {
    refuse_special_outputs(dir_, outputs_);  // before any work: the run would end refused
    journal = recover(dir_, read_journal(lock_fd_, dir_));
  } catch (const fs::filesystem_error& e) {
    throw UsageError("--out '" + dir_ + "': cannot clean up after an earlier run (" + e.code().message() + ")");
  }
  std::string pattern = (fs::path(dir_) / (std::string(kStagingPrefix) + "XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw UsageError("--out '" + dir_ + "': the directory is not writable (" + std::strerror(errno) + ")");
  }
  staging_ = pattern;
  // Listed only once made: a run killed before this line leaks an empty folder
  // rather than listing a name that might be someone else's.
  struct stat st {};
  if (::lstat(staging_.c_str(), &st) == 0) {
    journal.push_back({fs::path(staging_).filename().string(), static_cast<unsigned long long>(st.st_dev),
                       static_cast<unsigned long long>(st.st_ino)});
  }
  try {
    write_journal(lock_fd_, journal);
  } catch (const ag::DataError& e) {
    ::rmdir(staging_.c_str());  // made a moment ago, still empty
    staging_.clear();
    throw UsageError("--out '" + dir_ + "': " + e.what());
  }
}

RunFolder::~RunFolder() {
  std::error_code ec;
  if (!staging_.empty()) {
    fs::remove_all(staging_, ec);
    forget(lock_fd_, dir_, staging_);
  }
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
  if (!ec) forget(lock_fd_, dir_, staging_);
  staging_.clear();
  committed_ = true;
  return moved;
}

}  // namespace cli
