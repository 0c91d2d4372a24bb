// Before any student is graded: the limits of a run, and the checks of the
// grader's own environment (its compiler, a TMPDIR that can run programs, a
// sandbox that runs a program that does nothing). Their failures are
// GraderErrors: the grader's own, exit status 3, never a student's 0.
#pragma once

#include "assignments/grading/run.h"

namespace grading {

void set_limits(GradeSetup& s, double run_seconds, double compile_seconds);
void check_environment(const GradeSetup& s);
void probe_sandbox(const GradeSetup& s);

}  // namespace grading
