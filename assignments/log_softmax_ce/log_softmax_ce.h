// Exercise: the backward of the mean softmax cross-entropy (statement.md in this folder).
#pragma once

#include <armadillo>

// logits z is N x C; labels holds N class indices, each in 0..C-1; dloss = dL/dloss,
// the gradient arriving at the 1x1 loss. Return dL/dz, N x C.
arma::mat log_softmax_ce_backward(const arma::mat& logits, const arma::uvec& labels, double dloss);
