// autograd grade --class DIR: every submission in a folder, graded one by one
// (or --jobs N at a time), a summary table and one CSV row per submission.
#pragma once

#include <string>
#include <vector>

#include "assignments/grading/csv_log.h"
#include "assignments/grading/formats.h"
#include "assignments/kit/grader.h"

namespace grading {

struct ClassOptions {
  std::string dir, exercise, csv, sandbox = "auto";
  int jobs = 1;
  double timeout = 10, compile_timeout = 60;
  long long seed = -1;  // -1: a fresh seed per submission
  bool resume = false;  // keep the CSV's rows, grade only the students without one
  Format format = Format::Text;  // other than Text: the document on stdout, the progress on stderr
};

int grade_class(const ClassOptions& options);

}  // namespace grading
