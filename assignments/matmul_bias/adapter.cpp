// The bridge between the grader and the student's linear_backward (trusted; built into the child).
#include "assignments/kit/child.h"
#include "assignments/matmul_bias/matmul_bias.h"

std::vector<arma::mat> kit_child::answer(const std::vector<arma::mat>& sent) {  // X, W, dY
  const LinearGrads g = linear_backward(sent.at(0), sent.at(1), sent.at(2));
  return {g.dX, g.dW, g.db};
}
