// The bridge between the grader and the student's rmsnorm_backward (trusted; built into the child).
#include "assignments/kit/child.h"
#include "assignments/rmsnorm/rmsnorm.h"

std::vector<arma::mat> kit_child::answer(const std::vector<arma::mat>& sent) {  // x, gamma, dy, eps
  const RMSNormGrads g = rmsnorm_backward(sent.at(0), sent.at(1), sent.at(2), sent.at(3)(0));
  return {g.dx, g.dgamma};
}
