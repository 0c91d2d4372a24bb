// The student's side of grading: a small program built from the student's
// file, the exercise's adapter.cpp and kit/child_main.cpp, linked with
// Armadillo only (not the autograd libraries). It reads the inputs the grader
// drew, calls the student's backward through the adapter and writes back the
// gradients it returned. It scores nothing: the grader (the `autograd`
// program, the parent) validates the answer and computes every check itself.
#pragma once

#include <armadillo>

#include <vector>

namespace kit_child {

// Defined by the exercise's adapter.cpp: the student's gradients for one case,
// given the matrices the spec's "sends" line names, in that order (eps as 1x1).
std::vector<arma::mat> answer(const std::vector<arma::mat>& sent);

}  // namespace kit_child
