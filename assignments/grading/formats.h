// What a grade is written as (--format): the text a person reads, or a document
// a course platform reads, from the one grader run, for one file or a class.
//   json          the grade as it is: status, score, seed, sandbox, every check
//   gradescope    results.json as Gradescope's autograder reads it
//   prairielearn  results.json as PrairieLearn's external grader reads it
//   junit         JUnit XML (CodeGrade, GitHub's test reporters)
// Every format carries the seed and the sandbox, so a document copied into a
// gradebook can be regraded (--seed) and still says whether it was isolated.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "assignments/grading/run.h"

namespace grading {

enum class Format { Text, Json, Gradescope, PrairieLearn, Junit };

// The format named by --format; false when `name` is none of them.
bool format_named(const std::string& name, Format& format);

// What every submission of a run shares.
struct RunContext {
  std::string exercise;
  std::string sandbox;  // sandbox_label(): "bwrap", "user (...)", "none (NOT isolated: ...)"
  std::string banner;   // isolation_text(): what is isolated and bounded
};

struct Graded {
  std::string file;  // as the student named it; printed through ag::printable
  Outcome outcome;
};

// The text report of one file (what `autograd grade FILE` prints after its banner).
void write_text_report(std::ostream& os, const Graded& g);

// The document of one file, or of a class, in a format other than Text.
std::string format_one(Format format, const RunContext& run, const Graded& g);
std::string format_class(Format format, const RunContext& run, const std::vector<Graded>& all);

}  // namespace grading
