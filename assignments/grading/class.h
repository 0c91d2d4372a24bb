// autograd grade --class DIR: every submission in a folder, graded one by one
// (or --jobs N at a time), a summary table and one CSV row per submission, and
// beside the CSV a feedback file per student and the class's mistakes counted.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "assignments/grading/class_mistakes.h"
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

// What a class run writes beside its CSV file (scores.csv): scores.feedback/, a file per student
// (feedback.h), written as each finishes; scores.mistakes.txt, the mistakes counted (class_mistakes.h);
// scores.mistakes.png, their bar chart, drawn by the caller (the command line links the plotting
// library, this library may not). Nothing is written beside a CSV that is not a file (--csv /dev/tty).
struct ClassFiles {
  std::filesystem::path feedback, table, chart;
};
ClassFiles class_files(const std::string& csv);

struct ClassRun {
  std::vector<MistakeCount> mistakes;  // of the submissions this run graded
  std::string chart_title;
  std::filesystem::path chart;  // where the chart goes; empty when nothing is written beside the CSV
};

ClassRun grade_class(const ClassOptions& options);

// One submission: a file, or why it cannot be graded at all.
struct Submission {
  std::string label;  // the path under DIR, as the CSV shows it
  std::filesystem::path file;
  std::string refused;  // why it cannot be graded at all ("no .cpp file in the folder")
};

// A student's folder `dir` (a class's, or Gradescope's /autograder/submission): its
// <exercise>.cpp, else its only .cpp file; with none, several, or one that is not a plain file,
// `refused` says why. `label` names the folder in the result ("alice", "submission").
Submission from_folder(const std::filesystem::path& dir, const std::string& label, const std::string& exercise);

}  // namespace grading
