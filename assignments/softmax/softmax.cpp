// exercise: softmax
// The softmax backward. Read statement.md in this folder first.
// Grade it with:  autograd grade assignments/softmax/softmax.cpp
#include "assignments/softmax/softmax.h"

arma::mat softmax_backward(const arma::mat& y, const arma::mat& dy) {
  arma::mat dx(arma::size(y), arma::fill::zeros);
  // TODO 1: for each row i, the scalar s_i = sum_j dy_ij * y_ij (an N x 1 column).
  // TODO 2: dx_ij = y_ij * (dy_ij - s_i).
  (void)dy;
  return dx;
}
