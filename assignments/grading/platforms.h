// The course platforms' documents (formats.h says which), and what they share
// with the json format. Internal to the grader library. These three are read by the student, so
// they hold kit::GradeReport::student_view(): each hidden case one test, "hidden case K", pass or fail.
#pragma once

#include <string>
#include <vector>

#include "assignments/grading/formats.h"

namespace grading {

// Gradescope's results.json: score, execution_time, output, output_format, and tests[]
// with name, score, max_score, status, output and visibility; the seed and the sandbox in extra_data.
std::string gradescope_results(const RunContext& run, const Graded& g);
// PrairieLearn's results.json: gradable (false when it does not build), score in 0..1,
// message, output, and tests[] with name, description, points, max_points, message, output.
std::string prairielearn_results(const RunContext& run, const Graded& g);
// JUnit XML: a testsuite per submission, a testcase per check (a failure when it is wrong,
// an error when it went unanswered), the seed and the sandbox as properties.
std::string junit_document(const RunContext& run, const std::vector<Graded>& all);

std::string json_number(double x);               // 3 decimals
bool row_passed(const kit::GradeRow& row);       // correct, answered, and all its points
std::string row_hint(const kit::GradeRow& row);  // what went wrong ("" when it passed)
std::string student_text(const RunContext& run, const Graded& g);  // the banner and the text report

}  // namespace grading
