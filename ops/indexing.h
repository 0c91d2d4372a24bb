// Picking, cutting and joining: what a transformer needs to look up token
// embeddings, split a (tokens x width) matrix into heads and sequences, merge
// them back, mask the future and drop activations.
#pragma once

#include <vector>

#include "autograd/rng.h"
#include "autograd/tape.h"

namespace ag {

// Which way a block is cut or parts are joined: rows (vcat, rows) or columns (hcat, cols).
enum class Axis { Rows, Cols };

// out.row(i) = table.row(indices(i)); dtable.row(indices(i)) += dout.row(i), so a
// repeated index accumulates. An index >= table.rows() throws, naming it.
Var embedding(Var table, const arma::uvec& indices);

// x.rows(first, first + count - 1) and x.cols(...); the gradient lands in that block.
Var rows(Var x, arma::uword first, arma::uword count);
Var cols(Var x, arma::uword first, arma::uword count);

// Side by side (same number of rows) and stacked (same number of columns).
Var hcat(const std::vector<Var>& parts);
Var vcat(const std::vector<Var>& parts);

// value where mask(i, j) != 0, x(i, j) elsewhere; the mask is a constant of x's
// shape, value may be -infinity (a causal mask), and no gradient flows there.
// Under anomaly mode only the entries outside the mask are checked.
Var masked_fill(Var x, const arma::umat& mask, double value);
// 1 above the diagonal of a T x T matrix: position i may not look at j > i.
arma::umat causal_mask(arma::uword T);

// Inverted dropout: each element kept with probability 1 - p and scaled by
// 1 / (1 - p), drawn from rng; returns x itself when !training or p == 0.
Var dropout(Var x, double p, Rng& rng, bool training);

// What each op is (autograd/tape.h's OpDef), defined beside it in indexing.cpp.
// embedding, masked_fill and dropout have no rule in their def: each node
// carries its own, holding the indices, mask or keep-mask its backward holds.
const OpDef& embedding_def();
const OpDef& rows_def();
const OpDef& cols_def();
const OpDef& hcat_def();
const OpDef& vcat_def();
const OpDef& masked_fill_def();
const OpDef& dropout_def();

}  // namespace ag
