#include "assignments/grading/feedback.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <vector>

#include "assignments/grading/csv_log.h"
#include "assignments/grading/text.h"
#include "autograd/format.h"
#include "data/atomic_write.h"

namespace grading {

namespace {

// Each line of `text` marked "  | ", as the terminal shows a program's own output.
void marked_lines(std::ostream& os, const std::string& text) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) os << "  | " << line << "\n";
}

// 15 significant digits: "only approximate" (1e-11 off) shows in the digits, rounding (1e-16) does not.
std::string number(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.15g", x);
  return buf;
}

// One check: its result and points, the two numbers where yours is furthest off, and its hint
// (each hint once, under the first check that needs it, as on the terminal).
void write_check(std::ostream& os, const kit::GradeRow& r, std::vector<std::string>& hinted) {
  os << "  " << r.check << ", " << r.gradient << ": " << r.result << " ("
     << (r.max_points == 0 ? "given, no points" : std::to_string(r.points) + "/" + std::to_string(r.max_points)) << ")\n";
  const ag::Diagnosis& d = r.diagnosis;
  if (!d.correct() && d.elementwise) {
    char gap[32];
    std::snprintf(gap, sizeof gap, "%.2e", std::abs(d.worst_yours - d.worst_expected));
    os << "      furthest off at row " << d.worst_row << ", column " << d.worst_col << " (counting from 0): expected "
       << number(d.worst_expected) << ", yours " << number(d.worst_yours) << " (off by " << gap << ")\n";
  }
  const std::string hint = r.note.empty() ? d.hint : r.note;
  if (d.correct() || hint.empty() || std::find(hinted.begin(), hinted.end(), hint) != hinted.end()) return;
  os << "      hint: " << as_text(hint, false) << "\n";
  hinted.push_back(hint);
}

}  // namespace

std::string feedback_file_name(const std::string& label, std::size_t index) {
  std::string raw;
  for (const char c : label.substr(0, label.find('/'))) raw += c == '\\' ? std::string("\\x5c") : std::string(1, c);
  std::string name;
  for (const char c : ag::printable(raw)) name += c == '/' ? std::string("\\x2f") : std::string(1, c);
  if (name.size() > 240) {  // a file name may have 255 bytes; cut before a UTF-8 sequence, not inside one
    std::size_t cut = 200;
    while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) --cut;
    name = name.substr(0, cut) + "~" + std::to_string(index);
  }
  name += ".txt";
  return name[0] == '.' ? "\\x2e" + name.substr(1) : name;
}

std::string feedback_text(const Graded& g) {
  const Outcome& out = g.outcome;
  const kit::GradeReport& r = out.report;
  std::ostringstream os;
  os << "Feedback on " << ag::printable(g.file) << ": " << r.title << " (assignments/" << r.exercise
     << "/statement.md)\n\nresult: " << out.status << ", " << r.score() << "/" << r.max_score() << " (" << r.percent()
     << "%)\n";
  if (!out.reason.empty()) os << "why: " << as_text(out.reason, false) << "\n";
  os << "inputs drawn with seed " << r.seed << " (--seed " << r.seed << " draws the same ones)\n";
  // The outputs were escaped when they were read (run.cpp); as_text leaves text as it is, so
  // this file is safe to cat whoever called it.
  if (!out.compiler_output.empty()) {
    os << "\nThe compiler said:\n";
    marked_lines(os, as_text(out.compiler_output));
  }
  if (!out.program_output.empty()) {
    os << "\nYour program's own output (not graded):\n";
    marked_lines(os, as_text(out.program_output));
  }
  if (!out.limit_hit.empty()) os << "\nYour program: " << as_text(out.limit_hit, false) << "\n";
  // What stopped the program, unless the line above ("why: does not compile ...") said it.
  if (!r.failure.empty() && out.reason.find(r.failure) == std::string::npos) {
    os << "\nYour program: " << as_text(r.failure, false) << "; the checks it did not answer score 0\n";
  }
  const bool answered = std::any_of(r.rows.begin(), r.rows.end(), [](const kit::GradeRow& row) {
    return row.result != "not answered";
  });
  if (answered) {
    os << "\nEach check (where one is wrong: the element furthest from the exact gradient):\n";
    std::vector<std::string> hinted;
    for (const kit::GradeRow& row : r.rows) write_check(os, row, hinted);
  }
  const std::vector<std::string> mistakes = mistake_names(out);
  os << "\nmistakes: ";
  for (std::size_t i = 0; i < mistakes.size(); ++i) os << (i ? "; " : "") << mistakes[i];
  os << (mistakes.empty() ? (out.status == "graded" ? "none" : "not graded: " + out.status) : "") << "\n";
  return os.str();
}

std::filesystem::path write_feedback(const std::filesystem::path& folder, const Graded& g, std::size_t index) {
  const std::filesystem::path path = folder / feedback_file_name(g.file, index);
  ag::write_file_atomic(path.string(), feedback_text(g));
  return path;
}

}  // namespace grading
