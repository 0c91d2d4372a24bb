// autograd grade --class DIR: every submission in a folder, graded one by one
// (or --jobs N at a time), a summary table and one CSV row per submission.
#pragma once

#include <string>
#include <vector>

#include "assignments/grading/formats.h"
#include "assignments/kit/grader.h"

namespace grading {

struct ClassOptions {
  std::string dir, exercise, csv, sandbox = "auto";
  int jobs = 1;
  double timeout = 10, compile_timeout = 60;
  long long seed = -1;  // -1: a fresh seed per submission
  Format format = Format::Text;  // other than Text: the document on stdout, the progress on stderr
};

int grade_class(const ClassOptions& options);

// One CSV field, quoted when it must be (RFC 4180); text that a spreadsheet
// would run as a formula (=, +, -, @ first) is prefixed with a quote.
std::string csv_field(const std::string& text, bool is_text = true);

}  // namespace grading
