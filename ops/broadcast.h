// Broadcasting: a 1xD row, an Nx1 column or a 1x1 scalar stands in for an NxD
// matrix by repeating itself. Forward repeats; backward therefore sums: every
// copy sent a gradient back to the same input element.
#pragma once

#include <armadillo>

#include <string>

namespace ag {

struct Shape {
  arma::uword rows, cols;
};

// The shape two operands broadcast to; throws naming `op` and both shapes.
Shape broadcast_shape(const std::string& op, const arma::mat& a, const arma::mat& b);

// `m` repeated up to rows x cols (a copy only when the shape differs).
arma::mat expand(const arma::mat& m, Shape to);

// The gradient of a broadcast: sum `g` over the dimensions that were repeated.
arma::mat sum_to(const arma::mat& g, arma::uword rows, arma::uword cols);

}  // namespace ag

namespace ag {

class Tape;

// An operand at the broadcast shape: the matrix itself when it already fits,
// else a repeated copy. Saves a copy in the common same-shape case.
class Expanded {
 public:
  Expanded(const arma::mat& m, Shape to);
  const arma::mat& get() const { return fits_ ? *m_ : copy_; }

 private:
  const arma::mat* m_;
  bool fits_;
  arma::mat copy_;
};

// tape.accumulate(id, g) after summing g back to node id's shape.
void accumulate_unbroadcast(Tape& tape, std::size_t id, const arma::mat& g);

}  // namespace ag
