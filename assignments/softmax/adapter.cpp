// The bridge between the grader and the student's softmax_backward (trusted; built into the child).
#include "assignments/kit/child.h"
#include "assignments/softmax/softmax.h"

std::vector<arma::mat> kit_child::answer(const std::vector<arma::mat>& sent) {  // y, dy
  return {softmax_backward(sent.at(0), sent.at(1))};
}
