// Losses: each returns a 1x1 Var, the mean over the rows (samples), built
// from primitive ops so the tape derives the gradient.
#pragma once

#include <armadillo>

#include "autograd/tape.h"

namespace ag {

// mean((pred - target)^2) over every element. target has pred's shape.
Var mse(Var pred, const arma::mat& target);

// Softmax cross-entropy from raw logits (N x C) and class indices (N, each < C):
//   loss_i = -log softmax(z_i)[y_i] = logsumexp(z_i) - z_i[y_i]
// logsumexp subtracts the row maximum first, so large logits never overflow.
Var softmax_cross_entropy(Var logits, const arma::uvec& labels);

// Binary cross-entropy from logits z and targets t in [0, 1] (same shape):
//   loss = -t log sigmoid(z) - (1 - t) log(1 - sigmoid(z)) = softplus(z) - t z
// with softplus(z) = max(z, 0) + log(1 + exp(-|z|)), which never overflows.
Var bce_with_logits(Var logits, const arma::mat& targets);

// What each loss is (name and formulas; autograd/tape.h's OpDef), defined
// beside it in losses.cpp. Composed: no node carries these names.
const OpDef& mse_def();
const OpDef& softmax_cross_entropy_def();
const OpDef& bce_with_logits_def();

// Fraction of rows whose largest logit is at the label's index.
double accuracy(const arma::mat& logits, const arma::uvec& labels);

// Row indices 0..C-1 as an N x C matrix of zeros with a 1 in each row's label column.
arma::mat one_hot(const arma::uvec& labels, arma::uword classes);

}  // namespace ag
