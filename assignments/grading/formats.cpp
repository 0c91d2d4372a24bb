#include "assignments/grading/formats.h"

#include <cstdio>
#include <sstream>

#include "assignments/grading/platforms.h"
#include "autograd/format.h"
#include "autograd/text.h"

namespace grading {

bool format_named(const std::string& name, Format& format) {
  const std::pair<const char*, Format> names[] = {{"text", Format::Text},
                                                  {"json", Format::Json},
                                                  {"gradescope", Format::Gradescope},
                                                  {"prairielearn", Format::PrairieLearn},
                                                  {"junit", Format::Junit}};
  for (const auto& [n, f] : names) {
    if (name == n) {
      format = f;
      return true;
    }
  }
  return false;
}

void write_text_report(std::ostream& os, const Graded& g) {
  const Outcome& out = g.outcome;
  if (out.status == "does not compile" || out.status == "refused") {
    // "the submission is a symbolic link" reads "FILE is a symbolic link" after the file's name.
    const std::string why = out.reason.rfind("the submission ", 0) == 0 ? out.reason.substr(15) : out.reason;
    os << out.compiler_output << "\n" << ag::printable(g.file) << " " << why << "\ninputs drawn with seed "
       << out.report.seed << " (--seed " << out.report.seed << " draws the same ones)\nscore: 0/"
       << out.report.max_score() << " (0%) ("
       << (out.status == "refused" ? "it was not built or graded" : "it must build to be graded") << ")\n";
    return;
  }
  if (!out.compiler_output.empty()) os << out.compiler_output;  // warnings
  // The program's own prints come first, each line marked, so the grader's score line stays the last line.
  if (!out.program_output.empty()) {
    os << "\nyour program's own output (not graded):\n";
    std::istringstream lines(out.program_output);
    for (std::string line; std::getline(lines, line);) os << "  | " << line << "\n";
  }
  if (!out.limit_hit.empty()) os << "\nyour program: " << out.limit_hit << "\n";
  os << "\n";
  out.report.print(os);
}

namespace {

std::string json_object_of(const RunContext& run, const Graded& g) {
  const Outcome& o = g.outcome;
  const kit::GradeReport& r = o.report;
  std::ostringstream js;
  js << "{\"file\": " << ag::json_string(ag::printable(g.file)) << ", \"exercise\": " << ag::json_string(run.exercise)
     << ", \"title\": " << ag::json_string(r.title) << ",\n \"status\": " << ag::json_string(o.status)
     << ", \"reason\": " << ag::json_string(o.reason) << ", \"score\": " << r.score() << ", \"max_score\": " << r.max_score()
     << ", \"percent\": " << r.percent() << ", \"seed\": " << r.seed << ", \"sandbox\": " << ag::json_string(run.sandbox)
     << ", \"seconds\": " << json_number(o.seconds) << ",\n \"compiler_output\": " << ag::json_string(o.compiler_output)
     << ",\n \"program_output\": " << ag::json_string(o.program_output) << ", \"limit_hit\": " << ag::json_string(o.limit_hit)
     << ", \"failure\": " << ag::json_string(r.failure) << ",\n \"checks\": [";
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    const kit::GradeRow& row = r.rows[i];
    js << (i ? ",\n  " : "\n  ") << "{\"name\": " << ag::json_string(row.check) << ", \"gradient\": "
       << ag::json_string(row.gradient) << ", \"result\": " << ag::json_string(row.result) << ", \"points\": " << row.points
       << ", \"max_points\": " << row.max_points << ", \"passed\": " << (row_passed(row) ? "true" : "false")
       << ", \"hint\": " << ag::json_string(row_hint(row)) << ", \"hidden_case\": " << row.hidden << "}";
  }
  js << "],\n \"hints\": [";
  const std::vector<std::string> hints = r.hints();
  for (std::size_t i = 0; i < hints.size(); ++i) js << (i ? ", " : "") << ag::json_string(hints[i]);
  js << "]}";
  return js.str();
}

std::string one_document(Format format, const RunContext& run, const Graded& g) {
  if (format == Format::Gradescope) return gradescope_results(run, g);
  if (format == Format::PrairieLearn) return prairielearn_results(run, g);
  return json_object_of(run, g);
}

}  // namespace

std::string json_number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", x);
  return buf;
}

bool row_passed(const kit::GradeRow& row) {
  return row.diagnosis.correct() && row.note.empty() && row.points == row.max_points;
}

std::string row_hint(const kit::GradeRow& row) {
  if (row_passed(row)) return "";
  return row.note.empty() ? row.diagnosis.hint : row.note;
}

std::string student_text(const RunContext& run, const Graded& g) {
  std::ostringstream text;
  text << run.banner << "\n";
  write_text_report(text, g);
  return text.str();
}

std::string format_one(Format format, const RunContext& run, const Graded& g) {
  if (format == Format::Junit) return junit_document(run, {g});
  return one_document(format, run, g) + "\n";
}

// A class: one document whose submissions each hold what one file's run writes.
std::string format_class(Format format, const RunContext& run, const std::vector<Graded>& all) {
  if (format == Format::Junit) return junit_document(run, all);
  std::string out = "{\"exercise\": " + ag::json_string(run.exercise) + ", \"sandbox\": " + ag::json_string(run.sandbox) +
                    ", \"submissions\": [";
  for (std::size_t i = 0; i < all.size(); ++i) {
    out += (i ? ",\n" : "\n") + std::string("{\"file\": ") + ag::json_string(ag::printable(all[i].file)) +
           ", \"result\": " + one_document(format, run, all[i]) + "}";
  }
  return out + "]}\n";
}

}  // namespace grading
