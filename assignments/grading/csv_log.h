// The class CSV, written as the run goes: the header first (all or nothing),
// then each finished row in one append, so Ctrl-C or a crash of the grader
// leaves every row that was finished. --resume keeps the rows of an earlier
// run of the same exercise and grades only the students without one.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "assignments/grading/run.h"

namespace grading {

// The label a spreadsheet counts by: graded, does-not-compile, timed-out, crashed (it died or
// exited before answering everything), refused or malformed.
std::string result_label(const std::string& status);

// The results of the checks a graded program lost points on, each once, in order ("wrong sign",
// "missing sum term"): the CSV's mistakes column, the feedback file's and the class's count.
std::vector<std::string> mistake_names(const Outcome& o);

// The class CSV's header (its check columns from any report of the exercise) and one row:
// file, status, result, seed, sandbox, seconds, finished (UTC), mistakes, compiler_error,
// the points of each check, total, max, percent, hints, reason.
std::string csv_header(const kit::GradeReport& any);
std::string csv_row(const std::string& file, const Outcome& o, const std::string& sandbox);

// One CSV field, quoted when it must be (RFC 4180); text that a spreadsheet
// would run as a formula (=, +, -, @ first) is prefixed with a quote.
std::string csv_field(const std::string& text, bool is_text = true);

// The records of a CSV (quoted fields may hold commas, quotes and newlines).
// `complete` is how many bytes hold whole records: a row cut short by a kill ends before it.
std::vector<std::vector<std::string>> csv_records(const std::string& text, std::size_t& complete);

class CsvLog {
 public:
  // A fresh file holding `header` (any earlier file of that name replaced), or with `resume`
  // the file as it is: its header must be `header`, a row cut short is dropped, and the
  // first field of each row is read into finished(). A CSV sent to a terminal (--csv /dev/tty) is
  // read there, so its text is escaped as the table's is (ag::printable); a file keeps names exactly.
  CsvLog(const std::string& path, const std::string& header, bool resume);
  ~CsvLog();
  CsvLog(const CsvLog&) = delete;
  CsvLog& operator=(const CsvLog&) = delete;

  const std::set<std::string>& finished() const { return finished_; }
  void append(const std::string& row);  // one write() on an O_APPEND descriptor; an ag::Error when it fails

 private:
  std::string path_;
  int fd_ = -1;
  bool for_terminal_ = false;
  std::set<std::string> finished_;
};

}  // namespace grading
