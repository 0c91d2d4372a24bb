#include "assignments/grading/class.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <atomic>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <mutex>
#include <random>
#include <thread>

#include "autograd/error.h"
#include "autograd/format.h"
#include "assignments/grading/run.h"
#include "data/atomic_write.h"

namespace grading {

namespace fs = std::filesystem;

namespace {

struct Submission {
  std::string label;  // the path under DIR, as the CSV shows it
  fs::path file;
  std::string refused;  // why it cannot be graded at all ("no .cpp file")
};

bool is_cpp(const fs::path& p) { return p.extension() == ".cpp"; }

// Why an entry that looks like a submission cannot be one: "" for a plain file.
std::string not_plain(const fs::file_status& st) {
  if (fs::is_regular_file(st)) return "";
  if (fs::is_symlink(st)) return "is a symbolic link (submissions must be plain files)";
  if (fs::is_directory(st)) return "is a folder, not a file";
  return "is not a regular file (a FIFO, socket or device)";
}

// A student's folder: NAME/<exercise>.cpp, else its only .cpp file; every
// other case is a row that says why.
Submission from_folder(const fs::path& dir, const std::string& label, const std::string& exercise) {
  Submission s{label, dir / (exercise + ".cpp"), ""};
  std::error_code ec;
  const fs::file_status named = fs::symlink_status(s.file, ec);
  if (fs::exists(named) || fs::is_symlink(named)) {
    s.label = label + "/" + exercise + ".cpp";
    if (const std::string why = not_plain(named); !why.empty()) s.refused = s.label + " " + why;
    return s;
  }
  std::vector<fs::path> found, odd;
  fs::directory_iterator it(dir, ec);
  if (ec) return {label, dir, "the folder cannot be read (" + ec.message() + ")"};
  for (const fs::directory_entry& e : it) {
    if (is_cpp(e.path())) (fs::is_regular_file(e.symlink_status(ec)) ? found : odd).push_back(e.path());
  }
  if (found.size() == 1) {
    s.file = found[0];
    s.label = label + "/" + found[0].filename().string();
  } else if (found.empty() && !odd.empty()) {
    s.label = label + "/" + odd[0].filename().string();
    s.refused = s.label + " " + not_plain(fs::symlink_status(odd[0], ec));
  } else {
    s.refused = found.empty() ? "no .cpp file in the folder"
                              : std::to_string(found.size()) + " .cpp files and none named " + exercise + ".cpp";
  }
  return s;
}

// Every .cpp entry and every folder is a row; a student folder that is a
// link, and a .cpp that is not a plain file, are rows that say why.
std::vector<Submission> submissions(const ClassOptions& o) {
  std::vector<fs::directory_entry> entries(fs::directory_iterator(o.dir), fs::directory_iterator());
  std::sort(entries.begin(), entries.end());
  std::vector<Submission> list;
  for (const fs::directory_entry& e : entries) {
    const std::string name = e.path().filename().string();
    std::error_code ec;
    const fs::file_status st = e.symlink_status(ec);
    if (fs::is_directory(st)) {
      list.push_back(from_folder(e.path(), name, o.exercise));
    } else if (fs::is_symlink(st) && fs::is_directory(fs::status(e.path(), ec))) {
      list.push_back({name, e.path(), "the student folder is a symbolic link (student folders must be plain folders)"});
    } else if (is_cpp(e.path())) {
      list.push_back({name, e.path(), not_plain(st)});
    }
  }
  return list;
}

// A CSV sent to a terminal (--csv /dev/tty) is read there, so its names are escaped as the
// table's are (ag::printable); one written to a file keeps them exactly.
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

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

// Every row names its seed (--seed redraws its inputs) and the sandbox, so a row copied into a
// gradebook can be regraded and still says whether it was isolated.
std::string csv_text(const std::vector<Submission>& subs, const std::vector<Outcome>& outcomes, Isolation isolation) {
  const std::string sandbox = sandbox_label(isolation);
  std::string out = "file,status,seed,sandbox";
  for (const kit::GradeRow& r : outcomes.at(0).report.rows) {
    out += "," + csv_field(r.check + " " + r.gradient + (r.max_points == 0 ? " (given, no points)" : ""));
  }
  out += ",total,max,percent,hints,reason\n";
  for (std::size_t i = 0; i < subs.size(); ++i) {
    const Outcome& o = outcomes[i];
    out += csv_field(subs[i].label) + "," + csv_field(o.status) + "," +
           std::to_string(o.report.seed) + "," + csv_field(sandbox);
    for (const kit::GradeRow& r : o.report.rows) out += "," + std::to_string(r.points);
    out += "," + std::to_string(o.report.score()) + "," + std::to_string(o.report.max_score()) + "," +
           std::to_string(o.report.percent()) + "," + csv_field(join(o.report.hints(), " | ")) + "," +
           csv_field(o.reason) + "\n";
  }
  return out;
}

void print_summary(std::ostream& os, const std::vector<Submission>& subs, const std::vector<Outcome>& outcomes) {
  std::size_t width = 10;
  for (const Submission& s : subs) width = std::max(width, std::min<std::size_t>(ag::printable(s.label).size() + 2, 50));
  os << "\n" << std::left << std::setw(int(width)) << "submission" << std::setw(18) << "status" << "score\n";
  for (std::size_t i = 0; i < subs.size(); ++i) {
    const kit::GradeReport& r = outcomes[i].report;
    os << std::setw(int(width)) << ag::printable(subs[i].label) << std::setw(18) << outcomes[i].status << r.score()
       << "/" << r.max_score() << " (" << r.percent() << "%)\n";
  }
}

// The run's document (--format other than text) on stdout, all of a class in one.
void write_document(const ClassOptions& o, const GradeSetup& setup, const std::vector<Submission>& subs,
                    const std::vector<Outcome>& outcomes) {
  std::vector<Graded> all;
  for (std::size_t i = 0; i < subs.size(); ++i) all.push_back({subs[i].label, outcomes[i]});
  const RunContext run{o.exercise, sandbox_label(setup.isolation), isolation_text(setup.isolation, setup.run_limits)};
  std::cout << format_class(o.format, run, all) << std::flush;
}

// A submission running as its own user still reads what every user may read: a class folder
// open to others would let it read (and #include) its classmates' files.
void check_class_folder_closed(const std::string& dir, Isolation isolation) {
  struct stat st {};
  if (isolation != Isolation::User || ::stat(dir.c_str(), &st) != 0 || (st.st_mode & S_IRWXO) == 0) return;
  char mode[8];
  std::snprintf(mode, sizeof mode, "%03o", unsigned(st.st_mode & 0777));
  throw GraderError("--sandbox user: the class folder " + ag::printable(dir) + " is open to other users (mode " + mode +
                    "), so a submission could read its classmates' files; close it first (chmod o-rwx " +
                    ag::printable(dir) + ")");
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

int grade_class(const ClassOptions& o) {
  std::error_code ec;
  if (!fs::is_directory(o.dir, ec)) throw ag::DataError("--class: no such folder: " + o.dir);
  if (o.csv.empty() && o.format == Format::Text) {
    throw ag::DataError("--class needs --csv FILE (where the scores go), or a --format other than text");
  }
  const fs::path csv_dir = fs::absolute(o.csv.empty() ? "x" : o.csv).parent_path();
  if (!fs::is_directory(csv_dir, ec)) throw ag::DataError("--csv: no such folder: " + csv_dir.string());
  const std::vector<Submission> subs = submissions(o);
  if (subs.empty()) throw ag::DataError("--class: no .cpp file and no student folder in " + o.dir);
  GradeSetup setup = prepare_grading(o.exercise, o.sandbox, o.timeout, o.compile_timeout);
  const RemoveOnExit remove{setup.root};
  check_class_folder_closed(o.dir, setup.isolation);
  std::ostream& log = o.format == Format::Text ? std::cout : std::cerr;  // stdout is the document's
  log << "grading " << subs.size() << " submissions for the '" << o.exercise << "' exercise, " << o.jobs
            << " at a time\n" << isolation_text(setup.isolation, setup.run_limits) << "\n" << std::flush;
  std::vector<Outcome> outcomes(subs.size());
  std::atomic<std::size_t> next{0};
  std::mutex print;
  std::random_device fresh;
  auto worker = [&] {
    for (std::size_t i; (i = next++) < subs.size();) {
      unsigned seed = 0;
      {
        std::lock_guard<std::mutex> lock(print);
        seed = o.seed >= 0 ? unsigned(o.seed) : fresh();
      }
      Outcome out = subs[i].refused.empty() ? grade_submission(setup, subs[i].file, seed, i, true)
                                            : refused_outcome(setup, seed, subs[i].refused);
      if (!out.limit_hit.empty()) out.reason += (out.reason.empty() ? "" : "; ") + out.limit_hit;
      std::lock_guard<std::mutex> lock(print);
      log << "[" << i + 1 << "/" << subs.size() << "] " << ag::printable(subs[i].label) << ": " << out.status << ", "
                << out.report.score() << "/" << out.report.max_score() << " (" << out.report.percent() << "%)"
                << (out.reason.empty() ? "" : ": " + ag::printable(out.reason)) << "\n" << std::flush;
      outcomes[i] = std::move(out);
    }
  };
  std::vector<std::thread> threads;
  for (int j = 0; j < o.jobs; ++j) threads.emplace_back(worker);
  for (std::thread& t : threads) t.join();
  kill_orphans();
  print_summary(log, subs, outcomes);
  if (!o.csv.empty()) {
    const std::string csv = csv_text(subs, outcomes, setup.isolation);
    ag::write_file_atomic(o.csv, is_terminal(o.csv) ? printable_lines(csv) : csv);
    log << "\nscores written to " << ag::printable(o.csv) << " (one row per submission)\n" << std::flush;
  }
  if (o.format != Format::Text) write_document(o, setup, subs, outcomes);
  return 0;
}

}  // namespace grading
