// Exercise: the backward of attention scores, S = Q K^T / sqrt(d) (statement.md in this folder).
#pragma once

#include <armadillo>

struct AttentionScoresGrads {
  arma::mat dQ;  // N x d, Q's shape
  arma::mat dK;  // M x d, K's shape
};

// S = Q K^T / sqrt(d): Q is N x d (a query per row), K is M x d (a key per row),
// S is N x M (the score of query i for key j). dS = dL/dS is N x M. Return dL/dQ and dL/dK.
AttentionScoresGrads attention_scores_backward(const arma::mat& Q, const arma::mat& K, const arma::mat& dS);
