// exercise: layernorm
// A "backward" that derives nothing (issue 37): the complex step, Im L(x + ih e_j) / h with
// h = 1e-20, where L = sum(dy % y). Exact to rounding, so it matches the exact gradient to 1e-13
// and scored 9/9 on every seed. test_grading_banned grades it in-process (full marks: no
// tolerance catches it) and through `autograd grade` (refused: the policy does).
#include <complex>
#include <vector>

#include "assignments/layernorm/layernorm.h"

namespace {

using Complex = std::complex<double>;
const double kStep = 1e-20;

// Row n's share of the loss, sum_k dy_k y_k, in complex arithmetic (beta adds no gradient to x or gamma).
Complex row_loss(const std::vector<Complex>& x, const std::vector<Complex>& gamma, const arma::mat& dy, arma::uword n,
                 double eps) {
  const double d = double(x.size());
  Complex mean = 0, var = 0, loss = 0;
  for (const Complex& v : x) mean += v / d;
  for (const Complex& v : x) var += (v - mean) * (v - mean) / d;
  const Complex rstd = 1.0 / std::sqrt(var + eps);
  for (std::size_t k = 0; k < x.size(); ++k) loss += dy(n, k) * (x[k] - mean) * rstd * gamma[k];
  return loss;
}

}  // namespace

LayerNormGrads layernorm_backward(const arma::mat& x, const arma::mat& gamma, const arma::mat& dy, double eps) {
  LayerNormGrads g;
  g.dx.zeros(x.n_rows, x.n_cols);
  g.dgamma.zeros(1, x.n_cols);
  g.dbeta = arma::sum(dy, 0);
  for (arma::uword n = 0; n < x.n_rows; ++n) {
    std::vector<Complex> xs(x.n_cols), gs(x.n_cols);
    for (arma::uword j = 0; j < x.n_cols; ++j) xs[j] = x(n, j), gs[j] = gamma(0, j);
    for (arma::uword j = 0; j < x.n_cols; ++j) {
      xs[j] += Complex(0, kStep);
      g.dx(n, j) = std::imag(row_loss(xs, gs, dy, n, eps)) / kStep;
      xs[j] = x(n, j);
      gs[j] += Complex(0, kStep);
      g.dgamma(0, j) += std::imag(row_loss(xs, gs, dy, n, eps)) / kStep;
      gs[j] = gamma(0, j);
    }
  }
  return g;
}
