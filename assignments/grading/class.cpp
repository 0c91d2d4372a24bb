#include "assignments/grading/class.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <atomic>
#include <filesystem>
#include <iomanip>
#include <exception>
#include <iostream>
#include <memory>
#include <mutex>
#include <random>
#include <thread>

#include "autograd/error.h"
#include "autograd/format.h"
#include "assignments/grading/run.h"
#include "assignments/grading/csv_log.h"
#include "assignments/grading/feedback.h"
#include "data/atomic_write.h"

namespace grading {

namespace fs = std::filesystem;

namespace {

bool is_cpp(const fs::path& p) { return p.extension() == ".cpp"; }

// Why an entry that looks like a submission cannot be one: "" for a plain file.
std::string not_plain(const fs::file_status& st) {
  if (fs::is_regular_file(st)) return "";
  if (fs::is_symlink(st)) return "is a symbolic link (submissions must be plain files)";
  if (fs::is_directory(st)) return "is a folder, not a file";
  return "is not a regular file (a FIFO, socket or device)";
}

}  // namespace

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

namespace {

// Every .cpp entry and every folder is a row; a student folder that is a
// link, and a .cpp that is not a plain file, are rows that say why.
// The run's own feedback folder, when the CSV is in the class folder, is not a student.
std::vector<Submission> submissions(const ClassOptions& o) {
  std::vector<fs::directory_entry> entries(fs::directory_iterator(o.dir), fs::directory_iterator());
  std::sort(entries.begin(), entries.end());
  std::error_code ec;
  const fs::path feedback = o.csv.empty() ? fs::path() : fs::absolute(class_files(o.csv).feedback);
  const fs::path own = o.csv.empty() ? fs::path() : fs::weakly_canonical(feedback.parent_path(), ec) / feedback.filename();
  const fs::path here = fs::weakly_canonical(o.dir, ec);
  std::vector<Submission> list;
  for (const fs::directory_entry& e : entries) {
    const std::string name = e.path().filename().string();
    if (here / name == own) continue;
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

// The submissions this run graded; those whose rows an earlier run wrote (--resume) are named as kept.
void print_summary(std::ostream& os, const std::vector<Submission>& subs, const std::vector<Outcome>& outcomes,
                   const std::vector<bool>& kept) {
  std::size_t width = 10;
  for (const Submission& s : subs) width = std::max(width, std::min<std::size_t>(ag::printable(s.label).size() + 2, 50));
  os << "\n" << std::left << std::setw(int(width)) << "submission" << std::setw(18) << "status" << "score\n";
  for (std::size_t i = 0; i < subs.size(); ++i) {
    const kit::GradeReport& r = outcomes[i].report;
    os << std::setw(int(width)) << ag::printable(subs[i].label);
    if (kept[i]) {
      os << "kept (its row in the CSV is an earlier run's)\n";
      continue;
    }
    os << std::setw(18) << outcomes[i].status << r.score() << "/" << r.max_score() << " (" << r.percent() << "%)\n";
  }
}

// The run's document (--format other than text) on stdout, all of a class in one.
void write_document(const ClassOptions& o, const GradeSetup& setup, const std::vector<Submission>& subs,
                    const std::vector<Outcome>& outcomes, const std::vector<bool>& kept) {
  std::vector<Graded> all;
  for (std::size_t i = 0; i < subs.size(); ++i) {
    if (!kept[i]) all.push_back({subs[i].label, outcomes[i]});
  }
  const RunContext run{o.exercise, sandbox_label(setup.isolation),
                       isolation_text(setup.isolation, setup.run_limits, setup.precompiled)};
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

namespace {

// Grades what has no row yet, `jobs` at a time; each finished row goes to the CSV at once.
void grade_all(const ClassOptions& o, const GradeSetup& setup, const std::vector<Submission>& subs,
               std::vector<Outcome>& outcomes, const std::vector<bool>& kept, CsvLog* csv,
               const fs::path& feedback, std::ostream& log) {
  std::atomic<std::size_t> next{0};
  std::mutex print;
  std::exception_ptr failed;  // a row that cannot be written stops the run
  std::random_device fresh;
  const std::string sandbox = sandbox_label(setup.isolation);
  auto worker = [&] {
    for (std::size_t i; (i = next++) < subs.size();) {
      unsigned seed = 0;
      {
        std::lock_guard<std::mutex> lock(print);
        if (failed || kept[i]) continue;
        seed = o.seed >= 0 ? unsigned(o.seed) : fresh();
      }
      Outcome out = subs[i].refused.empty() ? grade_submission(setup, subs[i].file, seed, i, true)
                                            : refused_outcome(setup, seed, subs[i].refused);
      if (!out.limit_hit.empty()) out.reason += (out.reason.empty() ? "" : "; ") + out.limit_hit;
      std::lock_guard<std::mutex> lock(print);
      log << "[" << i + 1 << "/" << subs.size() << "] " << ag::printable(subs[i].label) << ": " << out.status << ", "
          << out.report.score() << "/" << out.report.max_score() << " (" << out.report.percent() << "%)"
          << (out.reason.empty() ? "" : ": " + ag::printable(out.reason)) << "\n" << std::flush;
      try {
        if (csv != nullptr && !failed) csv->append(csv_row(subs[i].label, out, sandbox));
        if (!feedback.empty() && !failed) write_feedback(feedback, {subs[i].label, out}, i);
      } catch (...) {
        failed = std::current_exception();
      }
      outcomes[i] = std::move(out);
    }
  };
  std::vector<std::thread> threads;
  for (int j = 0; j < o.jobs; ++j) threads.emplace_back(worker);
  for (std::thread& t : threads) t.join();
  kill_orphans();
  if (failed) std::rethrow_exception(failed);
}

}  // namespace

ClassFiles class_files(const std::string& csv) {
  const fs::path stem = fs::path(csv).replace_extension();
  return {stem.string() + ".feedback", stem.string() + ".mistakes.txt", stem.string() + ".mistakes.png"};
}

namespace {

// The feedback folder, made when missing; anything else at its path (a file, a link) is refused.
fs::path feedback_folder(const ClassFiles& files) {
  std::error_code ec;
  fs::create_directory(files.feedback, ec);
  if (!fs::is_directory(fs::symlink_status(files.feedback, ec))) {
    throw ag::DataError("cannot write the feedback files: " + ag::printable(files.feedback.string()) +
                        " exists and is not a folder");
  }
  return files.feedback;
}

// The mistakes of what this run graded: the table on `log` and beside the CSV.
ClassRun count_class(const ClassOptions& o, const std::vector<Submission>& subs, const std::vector<Outcome>& outcomes,
                     const std::vector<bool>& kept, bool beside_csv, std::ostream& log) {
  std::vector<Graded> graded;
  std::size_t full_marks = 0;
  for (std::size_t i = 0; i < subs.size(); ++i) {
    if (kept[i]) continue;
    graded.push_back({subs[i].label, outcomes[i]});
    const kit::GradeReport& r = outcomes[i].report;
    full_marks += outcomes[i].status == "graded" && r.score() == r.max_score();
  }
  ClassRun run{count_mistakes(graded), o.exercise + ": mistakes across the class (" +
               std::to_string(graded.size()) + " submissions)", {}};
  const std::string table = mistakes_table(o.exercise, run.mistakes, graded.size(), full_marks, subs.size() - graded.size());
  log << "\n" << table;
  if (beside_csv) {
    const ClassFiles files = class_files(o.csv);
    ag::write_file_atomic(files.table.string(), table);
    run.chart = files.chart;
  }
  return run;
}

}  // namespace

ClassRun grade_class(const ClassOptions& o) {
  std::error_code ec;
  if (!fs::is_directory(o.dir, ec)) throw ag::DataError("--class: no such folder: " + o.dir);
  if (o.csv.empty() && (o.format == Format::Text || o.resume)) {
    throw ag::DataError(std::string(o.resume ? "--resume" : "--class") + " needs --csv FILE (where the scores go)" +
                        (o.resume ? "" : ", or a --format other than text"));
  }
  const fs::path csv_dir = fs::absolute(o.csv.empty() ? "x" : o.csv).parent_path();
  if (!fs::is_directory(csv_dir, ec)) throw ag::DataError("--csv: no such folder: " + csv_dir.string());
  const std::vector<Submission> subs = submissions(o);
  if (subs.empty()) throw ag::DataError("--class: no .cpp file and no student folder in " + o.dir);
  GradeSetup setup = prepare_grading(o.exercise, o.sandbox, o.timeout, o.compile_timeout);
  const RemoveOnExit remove{setup.root};
  check_class_folder_closed(o.dir, setup.isolation);
  std::unique_ptr<CsvLog> csv;
  if (!o.csv.empty()) csv = std::make_unique<CsvLog>(o.csv, csv_header(refused_outcome(setup, 0, "").report), o.resume);
  const bool beside_csv = csv && fs::is_regular_file(o.csv, ec);  // not beside /dev/tty
  const fs::path feedback = beside_csv ? feedback_folder(class_files(o.csv)) : fs::path();
  std::vector<bool> kept(subs.size(), false);
  for (std::size_t i = 0; csv && i < subs.size(); ++i) kept[i] = csv->finished().count(subs[i].label) > 0;
  const std::size_t to_grade = std::size_t(std::count(kept.begin(), kept.end(), false));
  std::ostream& log = o.format == Format::Text ? std::cout : std::cerr;  // stdout is the document's
  log << "grading " << to_grade << " submissions for the '" << o.exercise << "' exercise, " << o.jobs << " at a time"
      << (to_grade < subs.size() ? " (" + std::to_string(subs.size() - to_grade) + " kept from " + ag::printable(o.csv) + ")" : "")
      << "\n" << isolation_text(setup.isolation, setup.run_limits, setup.precompiled) << "\n" << std::flush;
  std::vector<Outcome> outcomes(subs.size());
  grade_all(o, setup, subs, outcomes, kept, csv.get(), feedback, log);
  print_summary(log, subs, outcomes, kept);
  const ClassRun run = count_class(o, subs, outcomes, kept, beside_csv, log);
  if (csv) log << "\nscores written to " << ag::printable(o.csv) << " (one row per submission, each as it finished)\n";
  if (beside_csv) {
    const ClassFiles files = class_files(o.csv);
    log << "feedback for each student in " << ag::printable(files.feedback.string()) << "/, the mistakes counted in "
        << ag::printable(files.table.string()) << "\n";
  }
  log << std::flush;
  if (o.format != Format::Text) write_document(o, setup, subs, outcomes, kept);
  return run;
}

}  // namespace grading
