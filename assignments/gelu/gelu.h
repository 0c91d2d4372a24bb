// Exercise: the GELU backward (statement.md in this folder).
#pragma once

#include <armadillo>

// y = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), element by element (the op
// table's `gelu`); x and dy = dL/dy are N x D. Return dL/dx, N x D.
arma::mat gelu_backward(const arma::mat& x, const arma::mat& dy);
