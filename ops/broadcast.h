// Broadcasting: a 1xD row, an Nx1 column or a 1x1 scalar stands in for an NxD
// matrix by repeating itself. Forward repeats; backward therefore sums: every
// copy sent a gradient back to the same input element.
#pragma once

#include <armadillo>

#include <string>
#include <string_view>

namespace ag {

struct Shape {
  arma::uword rows, cols;
};

// The shape two operands broadcast to; throws naming `op` and both shapes.
Shape broadcast_shape(std::string_view op, const arma::mat& a, const arma::mat& b);

// `m` repeated up to rows x cols (a copy only when the shape differs).
arma::mat expand(const arma::mat& m, Shape to);

// The gradient of a broadcast: sum `g` over the dimensions that were repeated.
arma::mat sum_to(const arma::mat& g, arma::uword rows, arma::uword cols);

}  // namespace ag

namespace ag {

class Tape;

// y(i, j) = f(a(i, j), b(i, j)) at the broadcast shape `s`, reading a repeated
// row, column or scalar in place: no N x D copy of an operand is made only to
// be read once (docs/performance.md has what that copy cost). Column by
// column, as Armadillo stores them, so each inner loop is contiguous.
template <class F>
arma::mat broadcast_apply(const arma::mat& a, const arma::mat& b, Shape s, F f) {
  arma::mat y(s.rows, s.cols, arma::fill::none);
  // Nothing to compute, and an empty operand has no column to point at (colptr
  // of an empty matrix dereferences a null pointer).
  if (y.is_empty()) return y;
  const bool a_full = a.n_rows == s.rows, b_full = b.n_rows == s.rows;
  for (arma::uword j = 0; j < s.cols; ++j) {
    const double* pa = a.colptr(a.n_cols == 1 ? 0 : j);
    const double* pb = b.colptr(b.n_cols == 1 ? 0 : j);
    double* py = y.colptr(j);
    if (a_full && b_full) {
      for (arma::uword i = 0; i < s.rows; ++i) py[i] = f(pa[i], pb[i]);
    } else if (b_full) {
      const double av = pa[0];
      for (arma::uword i = 0; i < s.rows; ++i) py[i] = f(av, pb[i]);
    } else {
      const double bv = pb[0];
      for (arma::uword i = 0; i < s.rows; ++i) py[i] = f(pa[i], bv);
    }
  }
  return y;
}

// tape.accumulate(id, g) after summing g back to node id's shape.
void accumulate_unbroadcast(Tape& tape, std::size_t id, const arma::mat& g);
void accumulate_unbroadcast(Tape& tape, std::size_t id, arma::mat&& g);

}  // namespace ag
