// Exercise: the backward of Y = X W + b with a broadcast bias (statement.md in this folder).
#pragma once

#include <armadillo>

struct LinearGrads {
  arma::mat dX;  // N x K
  arma::mat dW;  // K x M
  arma::mat db;  // 1 x M
};

// Y = X W + b (kit::linear_forward): X is N x K, W is K x M, b is 1 x M and is
// added to every row. dY = dL/dY is N x M. Return dL/dX, dL/dW, dL/db.
LinearGrads linear_backward(const arma::mat& X, const arma::mat& W, const arma::mat& dY);
