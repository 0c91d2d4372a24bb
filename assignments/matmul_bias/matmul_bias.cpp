// exercise: matmul_bias
// The backward of Y = X W + b, with b broadcast to every row. Read statement.md first.
// Grade it with:  autograd grade assignments/matmul_bias/matmul_bias.cpp
#include "assignments/matmul_bias/matmul_bias.h"

LinearGrads linear_backward(const arma::mat& X, const arma::mat& W, const arma::mat& dY) {
  LinearGrads g;
  // TODO 1: dX (N x K). Each Y_ij = sum_k X_ik W_kj + b_j. Which product of dY and W has shape N x K?
  // TODO 2: dW (K x M). Which product of X and dY has shape K x M?
  // TODO 3: db (1 x M). b was repeated down the N rows in the forward.
  g.dX.zeros(arma::size(X));
  g.dW.zeros(arma::size(W));
  g.db.zeros(1, W.n_cols);
  (void)dY;
  return g;
}
