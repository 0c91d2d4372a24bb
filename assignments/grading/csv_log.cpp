#include "assignments/grading/csv_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "autograd/error.h"
#include "autograd/format.h"
#include "data/atomic_write.h"

namespace grading {

namespace fs = std::filesystem;

namespace {

bool is_terminal(const std::string& path) {
  std::error_code ec;
  if (!fs::is_character_file(fs::status(path, ec))) return false;
  const int fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  const bool terminal = fd >= 0 && ::isatty(fd);
  if (fd >= 0) ::close(fd);
  return terminal;
}

std::string printable_lines(const std::string& text) {
  std::string out;
  std::size_t start = 0;
  for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
    out += ag::printable(text.substr(start, end - start)) + "\n";
  }
  return out + ag::printable(text.substr(start));
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::string csv_field(const std::string& text, bool is_text) {
  std::string s = text;
  if (is_text && !s.empty() && std::string("=+-@\t\r").find(s[0]) != std::string::npos) s = "'" + s;
  if (s.find_first_of(",\"\n\r") == std::string::npos && (s.empty() || (s.front() != ' ' && s.back() != ' '))) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::vector<std::vector<std::string>> csv_records(const std::string& text, std::size_t& complete) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string field;
  bool quoted = false;
  complete = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') field += text[++i];
      else if (c == '"') quoted = false;
      else field += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      record.push_back(std::move(field));
      field.clear();
    } else if (c == '\n') {
      record.push_back(std::move(field));
      field.clear();
      records.push_back(std::move(record));
      record.clear();
      complete = i + 1;
    } else {
      field += c;
    }
  }
  return records;
}

CsvLog::CsvLog(const std::string& path, const std::string& header, bool resume) : path_(path) {
  for_terminal_ = is_terminal(path);
  std::error_code ec;
  if (resume && fs::is_regular_file(path, ec)) {
    const std::string text = read_all(path);
    std::size_t complete = 0;
    const std::vector<std::vector<std::string>> records = csv_records(text, complete);
    std::size_t header_end = 0;
    if (records.empty() || csv_records(header, header_end) != std::vector<std::vector<std::string>>{records[0]}) {
      throw ag::DataError("--resume: the header of " + ag::printable(path) + " is not this run's (another exercise, "
                          "or another version of the grader); give a new --csv file");
    }
    for (std::size_t i = 1; i < records.size(); ++i) {
      const std::string& file = records[i].at(0);  // csv_field's quote before a formula's first character undone
      const bool marked = file.size() > 1 && file[0] == '\'' && std::string("=+-@\t\r").find(file[1]) != std::string::npos;
      finished_.insert(marked ? file.substr(1) : file);
    }
    if (complete < text.size()) fs::resize_file(path, complete);  // a row a kill cut short
  } else if (!for_terminal_) {
    ag::write_file_atomic(path, header);
  }
  fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY);
  if (fd_ < 0) throw ag::DataError("cannot write " + ag::printable(path) + " (" + std::strerror(errno) + ")");
  if (for_terminal_) append(header);
}

CsvLog::~CsvLog() {
  if (fd_ >= 0) ::close(fd_);
}

void CsvLog::append(const std::string& row) {
  const std::string text = for_terminal_ ? printable_lines(row) : row;
  const ssize_t n = ::write(fd_, text.data(), text.size());
  if (n != ssize_t(text.size())) {
    throw ag::Error("cannot append a row to " + ag::printable(path_) + " (" +
                    (n < 0 ? std::strerror(errno) : "a short write") + ")");
  }
}

}  // namespace grading
