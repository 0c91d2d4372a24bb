// The bridge between the grader and the student's gelu_backward (trusted; built into the child).
#include "assignments/kit/child.h"
#include "assignments/gelu/gelu.h"

std::vector<arma::mat> kit_child::answer(const std::vector<arma::mat>& sent) {  // x, dy
  return {gelu_backward(sent.at(0), sent.at(1))};
}
