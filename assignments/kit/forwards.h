// The forwards an exercise.spec can name that are not op-table rows, on plain
// matrices (one sample per row): softmax, layernorm, rmsnorm, matmul_bias.
// They are given: you write the backwards. The child is sent their values; the
// grader's exact reference is the same math on the tape (kit::exact_gradients).
#pragma once

#include <armadillo>

namespace kit {

// y_ij = exp(x_ij - m_i) / sum_k exp(x_ik - m_i), with m_i the row's maximum (no overflow).
inline arma::mat softmax_forward(const arma::mat& x) {
  const arma::mat shifted = x.each_col() - arma::max(x, 1);
  const arma::mat e = arma::exp(shifted);
  return e.each_col() / arma::sum(e, 1);
}

// y = (x - mean) / sqrt(var + eps) * gamma + beta, per row, biased variance (divide by D).
inline arma::mat layernorm_forward(const arma::mat& x, const arma::mat& gamma, const arma::mat& beta,
                                   double eps) {
  const arma::mat centred = x.each_col() - arma::mean(x, 1);
  const arma::vec rstd = 1.0 / arma::sqrt(arma::mean(arma::square(centred), 1) + eps);
  arma::mat y = centred.each_col() % rstd;
  y.each_row() %= gamma;
  y.each_row() += beta;
  return y;
}

// y = x / sqrt(mean(x^2) + eps) * gamma, per row.
inline arma::mat rmsnorm_forward(const arma::mat& x, const arma::mat& gamma, double eps) {
  const arma::vec rrms = 1.0 / arma::sqrt(arma::mean(arma::square(x), 1) + eps);
  arma::mat y = x.each_col() % rrms;
  y.each_row() %= gamma;
  return y;
}

// Y = X W + b: X is N x K, W is K x M, the bias b (1 x M) is broadcast to every row.
inline arma::mat linear_forward(const arma::mat& X, const arma::mat& W, const arma::mat& b) {
  arma::mat Y = X * W;
  Y.each_row() += b;
  return Y;
}

}  // namespace kit
