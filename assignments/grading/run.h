// Grading one submission: build the student's file with the exercise's
// adapter and the protocol's main into a child program (in the sandbox, with
// a time limit), run it on freshly drawn inputs, and score its answer here,
// in the parent. The verdict is kit::score's; the child only supplies numbers.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "assignments/kit/grader.h"
#include "autograd/error.h"
#include "assignments/grading/sandbox.h"

namespace grading {

// Everything the submissions of one run share; the harness objects are built once.
struct GradeSetup {
  kit::Exercise exercise;
  std::string assignments;  // the folder of the exercises
  std::string compiler;
  std::vector<std::string> compile_flags, libraries, visible;
  std::string precompiled;  // the folder of the build's precompiled Armadillo header, visible to the compiles only; or ""
  Isolation isolation = Isolation::None;
  Limits compile_limits, run_limits;
  std::filesystem::path root;     // this run's temporary folder (removed by the caller)
  std::filesystem::path harness;  // root/harness: child_main.o and adapter.o
};

// Removes a run's temporary folder on every way out of its scope (a signal: sandbox.h).
struct RemoveOnExit {
  std::filesystem::path folder;
  ~RemoveOnExit();
};

// Reads the toolchain and the exercise, makes the temporary folder, checks that a
// program can be built and run there (else a GraderError) and builds the harness.
GradeSetup prepare_grading(const std::string& exercise, const std::string& sandbox, double run_seconds,
                           double compile_seconds);

struct Outcome {
  std::string status;  // "graded", "does not compile", "timed out", "crashed", "malformed answer", "exited early", "refused"
  std::string reason;  // one line: why it is not "graded"
  std::string compiler_output;
  std::string program_output;  // the child's stderr (its own prints), cut and escaped (text.h)
  std::string limit_hit;       // "it reached its limit of 64 processes at once (cgroup pids.max)", or ""
  kit::GradeReport report;     // always there: the unanswered checks score 0
  double seconds = 0;          // the compile and the run, on the wall clock
};

// The outcome of a submission refused before it is built (`reason`: "is a symbolic link").
Outcome refused_outcome(const GradeSetup& setup, unsigned seed, const std::string& reason);

// Grades `file` in ROOT/sub-INDEX (removed afterwards); never throws for a bad submission.
Outcome grade_submission(const GradeSetup& setup, const std::filesystem::path& file, unsigned seed, std::size_t index,
                         bool refuse_links);

// The exercises found in the assignments folder, and the one a file is for:
// --exercise, else its "// exercise: NAME" line, else its folder's name.
std::string assignments_folder();
std::string exercise_of(const std::filesystem::path& file, const std::string& option);

}  // namespace grading
