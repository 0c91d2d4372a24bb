// The grading protocol, the parent's side: the cases it sends to the child
// (kit/child_main.cpp documents the format) and the strict reader of the
// child's answer. The answer is data from an untrusted program: counts,
// shapes, numbers and the end mark are checked, and it is read only up to
// the point where it stops making sense.
#pragma once

#include <armadillo>

#include <string>
#include <vector>

namespace kit {

// One case as sent: the matrices the spec's "sends" line names.
std::string encode_cases(const std::vector<std::vector<arma::mat>>& sent);

struct Answer {
  bool answered = false;
  std::string threw;             // the child's backward threw this (what())
  std::vector<arma::mat> grads;  // one per input
};

struct ParsedAnswers {
  std::vector<Answer> answers;  // one per case sent; the unanswered stay answered = false
  bool complete = false;        // every case answered and the end mark read
  std::string error;            // "malformed answer: ..." when the frame broke off
};

// Reads the child's standard output. `grads` is how many gradients each case must hold.
ParsedAnswers parse_answers(const std::string& bytes, std::size_t cases, std::size_t grads);

}  // namespace kit
