#include "assignments/grading/platforms.h"

#include <cmath>
#include <sstream>

#include "autograd/format.h"
#include "autograd/text.h"

namespace grading {

namespace {

// "random 3x5: dx"; a hidden case's folded row (kit::GradeReport::student_view) is only "hidden case 2".
std::string test_name(const kit::GradeRow& row) { return row.hidden ? row.check : row.check + ": " + row.gradient; }

// What a test's output says: its result, and the hint when it is wrong.
std::string row_output(const kit::GradeRow& row) {
  const std::string hint = row_hint(row);
  return row.result + (hint.empty() ? "" : "\nhint: " + hint);
}

// A submission that was not built is not gradable on PrairieLearn (the student is told, no score is recorded).
bool gradable(const Outcome& o) { return o.status != "does not compile" && o.status != "refused"; }

std::string xml_escaped(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

// A check the program answered wrong is a failure; one it never answered (it did not build,
// crashed, timed out) is an error, as JUnit tells a failed assertion from a test that broke.
bool is_error(const Graded& g) { return g.outcome.status != "graded"; }

void junit_suite(std::ostringstream& xml, const RunContext& run, const Graded& g) {
  const kit::GradeReport r = g.outcome.report.student_view();  // a document the student reads
  int failures = 0, errors = 0;
  for (const kit::GradeRow& row : r.rows) {
    if (!row_passed(row)) ++(is_error(g) ? errors : failures);
  }
  xml << "  <testsuite name=\"" << xml_escaped(run.exercise + ": " + ag::printable(g.file)) << "\" tests=\""
      << r.rows.size() << "\" failures=\"" << failures << "\" errors=\"" << errors << "\" time=\""
      << json_number(g.outcome.seconds) << "\">\n    <properties>\n";
  const std::pair<std::string, std::string> properties[] = {
      {"seed", std::to_string(r.seed)}, {"sandbox", run.sandbox}, {"status", g.outcome.status},
      {"score", std::to_string(r.score())}, {"max_score", std::to_string(r.max_score())}};
  for (const auto& [name, value] : properties) {
    xml << "      <property name=\"" << name << "\" value=\"" << xml_escaped(value) << "\"/>\n";
  }
  xml << "    </properties>\n";
  for (const kit::GradeRow& row : r.rows) {
    xml << "    <testcase classname=\"" << xml_escaped(run.exercise) << "\" name=\"" << xml_escaped(test_name(row))
        << "\" time=\"0\"";
    if (row_passed(row)) {
      xml << "/>\n";
      continue;
    }
    const char* tag = is_error(g) ? "error" : "failure";
    xml << ">\n      <" << tag << " type=\"" << xml_escaped(row.result) << "\" message=\""
        << xml_escaped(row_hint(row)) << "\"/>\n    </testcase>\n";
  }
  xml << "    <system-out>" << xml_escaped(student_text(run, g)) << "</system-out>\n  </testsuite>\n";
}

}  // namespace

std::string gradescope_results(const RunContext& run, const Graded& g) {
  const kit::GradeReport r = g.outcome.report.student_view();  // a document the student reads
  std::ostringstream js;
  js << "{\"score\": " << r.score() << ", \"execution_time\": " << long(std::ceil(g.outcome.seconds))
     << ", \"output\": " << ag::json_string(student_text(run, g)) << ",\n \"output_format\": \"text\", \"visibility\": "
        "\"visible\", \"stdout_visibility\": \"hidden\",\n \"extra_data\": {\"exercise\": "
     << ag::json_string(run.exercise) << ", \"status\": " << ag::json_string(g.outcome.status) << ", \"seed\": " << r.seed
     << ", \"sandbox\": " << ag::json_string(run.sandbox) << ", \"max_score\": " << r.max_score() << "},\n \"tests\": [";
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    const kit::GradeRow& row = r.rows[i];
    js << (i ? ",\n  " : "\n  ") << "{\"name\": " << ag::json_string(test_name(row)) << ", \"score\": " << row.points
       << ", \"max_score\": " << row.max_points << ", \"status\": \"" << (row_passed(row) ? "passed" : "failed")
       << "\", \"output\": " << ag::json_string(row_output(row)) << ", \"visibility\": \"visible\"}";
  }
  js << "]}";
  return js.str();
}

std::string prairielearn_results(const RunContext& run, const Graded& g) {
  const kit::GradeReport r = g.outcome.report.student_view();  // a document the student reads
  const double score = gradable(g.outcome) && r.max_score() > 0 ? double(r.score()) / r.max_score() : 0.0;
  const std::string message = gradable(g.outcome) ? "score " + std::to_string(r.score()) + "/" +
                                                        std::to_string(r.max_score()) + " (seed " +
                                                        std::to_string(r.seed) + ")"
                                                  : g.outcome.reason + " (seed " + std::to_string(r.seed) + ")";
  std::ostringstream js;
  js << "{\"succeeded\": true, \"gradable\": " << (gradable(g.outcome) ? "true" : "false")
     << ", \"score\": " << json_number(score) << ", \"message\": " << ag::json_string(message)
     << ",\n \"output\": " << ag::json_string(student_text(run, g)) << ",\n \"tests\": [";
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    const kit::GradeRow& row = r.rows[i];
    js << (i ? ",\n  " : "\n  ") << "{\"name\": " << ag::json_string(row.check) << ", \"description\": "
       << ag::json_string(row.hidden ? "hidden case" : r.column + " " + row.gradient) << ", \"points\": " << row.points << ", \"max_points\": "
       << row.max_points << ", \"message\": " << ag::json_string(row.result) << ", \"output\": "
       << ag::json_string(row_hint(row)) << "}";
  }
  js << "]}";
  return js.str();
}

std::string junit_document(const RunContext& run, const std::vector<Graded>& all) {
  std::size_t tests = 0;
  int failures = 0, errors = 0;
  double seconds = 0;
  for (const Graded& g : all) {
    const kit::GradeReport r = g.outcome.report.student_view();
    tests += r.rows.size();
    seconds += g.outcome.seconds;
    for (const kit::GradeRow& row : r.rows) {
      if (!row_passed(row)) ++(is_error(g) ? errors : failures);
    }
  }
  std::ostringstream xml;
  xml << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"autograd grade "
      << xml_escaped(run.exercise) << "\" tests=\"" << tests << "\" failures=\"" << failures << "\" errors=\""
      << errors << "\" time=\"" << json_number(seconds) << "\">\n";
  for (const Graded& g : all) junit_suite(xml, run, g);
  xml << "</testsuites>\n";
  return xml.str();
}

}  // namespace grading
