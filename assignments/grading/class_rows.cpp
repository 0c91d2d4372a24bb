// The rows of the class CSV: what a spreadsheet needs to count (the result and mistake
// labels), to regrade (the seed), to trust (the sandbox) and to answer a student (the
// compiler's first error, the hints, the reason).
#include <algorithm>
#include <cstdio>
#include <ctime>

#include "assignments/grading/csv_log.h"
#include "autograd/text.h"

namespace grading {

namespace {

// The compiler's first error line (else its first line), one line of at most 300 bytes.
// The output is already text (as_text), so nothing in it can reach a terminal raw.
std::string compiler_error(const Outcome& o) {
  if (o.status != "does not compile") return "";
  const std::string& text = o.compiler_output;
  std::size_t at = text.find("error");
  at = at == std::string::npos ? 0 : text.rfind('\n', at);
  at = at == std::string::npos ? 0 : at + (text[at] == '\n');
  std::string line = text.substr(at, text.find('\n', at) - at);
  if (line.size() > 300) line = line.substr(0, 297) + "...";
  return line;
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  ::gmtime_r(&now, &utc);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buf;
}

}  // namespace

std::vector<std::string> mistake_names(const Outcome& o) {
  if (o.status != "graded") return {};
  std::vector<std::string> names;
  for (const kit::GradeRow& r : o.report.rows) {
    const bool lost = r.points < r.max_points || !r.diagnosis.correct() || !r.note.empty();
    if (lost && std::find(names.begin(), names.end(), r.result) == names.end()) names.push_back(r.result);
  }
  return names;
}

std::string result_label(const std::string& status) {
  if (status == "graded" || status == "refused") return status;
  if (status == "does not compile") return "does-not-compile";
  if (status == "timed out") return "timed-out";
  if (status == "malformed answer") return "malformed";
  return "crashed";  // "crashed", and "exited early": it stopped before answering everything
}

std::string csv_header(const kit::GradeReport& any) {
  std::string out = "file,status,result,seed,sandbox,seconds,finished,mistakes,compiler_error";
  for (const kit::GradeRow& r : any.rows) {
    out += "," + csv_field(r.check + " " + r.gradient + (r.max_points == 0 ? " (given, no points)" : ""));
  }
  return out + ",total,max,percent,hints,reason\n";
}

std::string csv_row(const std::string& file, const Outcome& o, const std::string& sandbox) {
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.1f", o.seconds);
  std::string out = csv_field(file) + "," + csv_field(o.status) + "," + result_label(o.status) + "," +
                    std::to_string(o.report.seed) + "," + csv_field(sandbox) + "," + seconds + "," + utc_now() + "," +
                    csv_field(ag::join(mistake_names(o), "; ")) + "," + csv_field(compiler_error(o));
  for (const kit::GradeRow& r : o.report.rows) out += "," + std::to_string(r.points);
  return out + "," + std::to_string(o.report.score()) + "," + std::to_string(o.report.max_score()) + "," +
         std::to_string(o.report.percent()) + "," + csv_field(ag::join(o.report.hints(), " | ")) + "," +
         csv_field(o.reason) + "\n";
}

}  // namespace grading
