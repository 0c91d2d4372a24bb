#include "assignments/kit/exercises.h"

#include "assignments/kit/forwards.h"

namespace kit {

namespace {

constexpr double kEps = 1e-5;

// Shapes every exercise is graded on: a wide one, a square one (a transposed
// gradient has the right shape there), a single row, and a tall one.
Case make_case(const char* what, arma::uword rows, arma::uword cols, unsigned seed) {
  return {std::string(what) + " " + std::to_string(rows) + "x" + std::to_string(cols),
          {random_matrix(rows, cols, seed)}};
}

// Adds gamma (and beta) rows of the case's width to each case.
std::vector<Case> norm_cases(bool with_beta) {
  std::vector<Case> cases = {make_case("random", 3, 5, 1), make_case("square", 4, 4, 2),
                             make_case("one row", 1, 6, 3), make_case("tall", 6, 3, 4)};
  unsigned seed = 10;
  for (Case& c : cases) {
    const arma::uword d = c.inputs[0].n_cols;
    c.inputs.push_back(random_matrix(1, d, seed++, 0.5, 1.5));  // gamma
    if (with_beta) c.inputs.push_back(random_matrix(1, d, seed++, -1, 1));
  }
  return cases;
}

}  // namespace

GradeReport grade_softmax(const SoftmaxBackward& backward) {
  Exercise ex;
  ex.name = "softmax";
  ex.title = "softmax backward";
  ex.input_names = {"x"};
  ex.forward = [](const ag::Inputs& in) { return softmax_forward(in[0]); };
  ex.backward = [backward](const ag::Inputs&, const arma::mat& y, const arma::mat& dy) {
    return ag::Grads{backward(y, dy)};
  };
  ex.cases = {make_case("random", 3, 5, 1), make_case("square", 4, 4, 2), make_case("one row", 1, 6, 3),
              make_case("large logits", 3, 4, 4)};
  ex.cases[3].inputs[0] += 50.0;  // exp(50+) would overflow a naive softmax; y stays fine
  return grade(ex);
}

GradeReport grade_layernorm(const LayerNormBackward& backward) {
  Exercise ex;
  ex.name = "layernorm";
  ex.title = "LayerNorm backward";
  ex.input_names = {"x", "gamma", "beta"};
  ex.forward = [](const ag::Inputs& in) { return layernorm_forward(in[0], in[1], in[2], kEps); };
  ex.backward = [backward](const ag::Inputs& in, const arma::mat&, const arma::mat& dy) {
    const LayerNormGrads g = backward(in[0], in[1], dy, kEps);
    return ag::Grads{g.dx, g.dgamma, g.dbeta};
  };
  ex.cases = norm_cases(true);
  return grade(ex);
}

GradeReport grade_rmsnorm(const RMSNormBackward& backward) {
  Exercise ex;
  ex.name = "rmsnorm";
  ex.title = "RMSNorm backward";
  ex.input_names = {"x", "gamma"};
  ex.forward = [](const ag::Inputs& in) { return rmsnorm_forward(in[0], in[1], kEps); };
  ex.backward = [backward](const ag::Inputs& in, const arma::mat&, const arma::mat& dy) {
    const RMSNormGrads g = backward(in[0], in[1], dy, kEps);
    return ag::Grads{g.dx, g.dgamma};
  };
  ex.cases = norm_cases(false);
  return grade(ex);
}

GradeReport grade_matmul_bias(const LinearBackward& backward) {
  Exercise ex;
  ex.name = "matmul_bias";
  ex.title = "matmul with a broadcast bias backward (Y = X W + b)";
  ex.input_names = {"X", "W", "b"};
  ex.forward = [](const ag::Inputs& in) { return linear_forward(in[0], in[1], in[2]); };
  ex.backward = [backward](const ag::Inputs& in, const arma::mat&, const arma::mat& dy) {
    const LinearGrads g = backward(in[0], in[1], dy);
    return ag::Grads{g.dX, g.dW, g.db};
  };
  // (N, K, M): W is K x M; the square case has K = M, where a transposed dW keeps its shape.
  const arma::uword shapes[][3] = {{4, 3, 2}, {3, 3, 3}, {1, 2, 4}, {5, 4, 2}};
  const char* names[] = {"random", "square W", "one row", "tall"};
  unsigned seed = 20;
  for (int i = 0; i < 4; ++i) {
    const arma::uword n = shapes[i][0], k = shapes[i][1], m = shapes[i][2];
    ex.cases.push_back({std::string(names[i]) + " " + std::to_string(n) + "x" + std::to_string(k) + " @ " +
                            std::to_string(k) + "x" + std::to_string(m),
                        {random_matrix(n, k, seed), random_matrix(k, m, seed + 1), random_matrix(1, m, seed + 2)}});
    seed += 3;
  }
  return grade(ex);
}

}  // namespace kit
