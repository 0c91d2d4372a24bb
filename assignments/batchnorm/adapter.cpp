// The bridge between the grader and the student's batchnorm_backward (trusted; built into the child).
#include "assignments/batchnorm/batchnorm.h"
#include "assignments/kit/child.h"

std::vector<arma::mat> kit_child::answer(const std::vector<arma::mat>& sent) {  // x, gamma, dy, eps
  const BatchNormGrads g = batchnorm_backward(sent.at(0), sent.at(1), sent.at(2), sent.at(3)(0));
  return {g.dx, g.dgamma, g.dbeta};
}
