// The mistakes of a class counted: which result each check lost points on
// ("wrong sign", "missing sum term") and why a submission was not graded
// ("does not compile"), each with the students who made it. Printed as a
// table at the end of a class run and written beside the CSV; the command
// line draws the same counts as a bar chart (cli/cmd_grade.cpp).
#pragma once

#include <string>
#include <vector>

#include "assignments/grading/formats.h"

namespace grading {

struct MistakeCount {
  std::string mistake;
  std::vector<std::string> students;  // the submissions, as the CSV names them
};

// Most students first, then by name. A student counts once per mistake; "partly correct (4/9)"
// and "(5/9)" count as one mistake, "partly correct".
std::vector<MistakeCount> count_mistakes(const std::vector<Graded>& graded);

// The table: a line saying how many submissions this run graded (and how many kept rows of an earlier run,
// --resume, are not counted), then a row per mistake: students, mistake, the first few names.
std::string mistakes_table(const std::string& exercise, const std::vector<MistakeCount>& counts,
                           std::size_t graded, std::size_t full_marks, std::size_t kept);

}  // namespace grading
