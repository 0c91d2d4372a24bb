// What an instructor hands out, written by `autograd grade --pack` (docs/grading.md, "Packs"):
// - the Gradescope autograder, one zip: setup.sh (builds a portable grader on Gradescope's
//   image), run_autograder (grades /autograder/submission into /autograder/results/results.json),
//   the exercise, and the project's source without the solutions and the lesson answers;
// - the student pack, a folder: the project's source without the solutions, the lesson answers
//   and the hidden cases, so a student's own build of `autograd grade` checks the visible cases.
#pragma once

#include <string>
#include <vector>

#include "data/zip_write.h"

namespace grading {

// The exercise's name checked against the grader's exercises: one line naming it, with the
// nearest name ("no exercise 'softmx' in ... (did you mean softmax?)"), as a DataError.
std::string known_exercise(const std::string& name);

// The files of the Gradescope zip for one exercise, the folder layout as Gradescope unzips it
// into /autograder/source: setup.sh, run_autograder, exercise.txt, course/assignments/{kit,NAME}/,
// autograd/ (the source tree).
std::vector<ag::ZipEntry> gradescope_pack(const std::string& exercise);

// The spec's text without its hidden cases: the `hidden = K` line and the last K `case` lines go.
// Throws DataError when every case is hidden (a self-check would have no case to check).
std::string visible_spec(const std::string& spec_text, const std::string& where);

// Writes the student pack into `dir` (a new or empty folder): the source tree, each exercise's
// spec without its hidden cases. Returns the number of files written.
std::size_t write_student_pack(const std::string& dir);

}  // namespace grading
