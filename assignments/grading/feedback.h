// A class run's feedback file for each student, written beside the CSV as each
// submission finishes: what the compiler said, what the program printed, every
// check with the two numbers where the answer is furthest from the exact
// gradient, and the mistakes and hints. The CSV is for counting; this is for the
// student to read.
#pragma once

#include <filesystem>
#include <string>

#include "assignments/grading/formats.h"

namespace grading {

// The file name of a student's feedback: the student's entry in the class folder (the part of
// `label` before its first '/': "alice" for "alice/softmax.cpp", "bob.cpp") and ".txt". Escaped so
// that it stays one file inside the feedback folder and is safe to list on a terminal: a backslash
// is written \x5c first, then ag::printable escapes controls and invalid UTF-8 as \xHH, a '/' becomes
// \x2f and a leading '.' \x2e (no "..", no hidden file). Entries of one folder differ, and so do
// their names here. A name over 240 bytes is cut and ends "~INDEX" (the submission's number).
std::string feedback_file_name(const std::string& label, std::size_t index);

// The text of a student's feedback file.
std::string feedback_text(const Graded& g);

// Writes FOLDER/feedback_file_name(...) atomically (data/atomic_write.h); returns its path.
std::filesystem::path write_feedback(const std::filesystem::path& folder, const Graded& g, std::size_t index);

}  // namespace grading
