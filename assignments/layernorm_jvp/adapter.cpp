// The bridge between the grader and the student's layernorm_jvp (trusted; built into the child).
// The grader sends x, gamma, beta, eps, then one tangent set (dx, dgamma, dbeta) per input, with
// only that input's tangent non-zero: one answer per set, so each term is graded on its own.
#include "assignments/kit/child.h"
#include "assignments/layernorm_jvp/layernorm_jvp.h"

std::vector<arma::mat> kit_child::answer(const std::vector<arma::mat>& sent) {
  const arma::mat &x = sent.at(0), &gamma = sent.at(1), &beta = sent.at(2);
  const double eps = sent.at(3)(0);
  std::vector<arma::mat> tangents;
  for (std::size_t t = 4; t + 3 <= sent.size(); t += 3) {
    tangents.push_back(layernorm_jvp(x, gamma, beta, sent[t], sent[t + 1], sent[t + 2], eps));
  }
  return tangents;
}
