// Exercise: the softmax backward (statement.md in this folder).
#pragma once

#include <armadillo>

// y = softmax(x), row by row (kit::softmax_forward), both N x D; dy = dL/dy.
// Return dL/dx, N x D.
arma::mat softmax_backward(const arma::mat& y, const arma::mat& dy);
