#include "ops/broadcast.h"

#include "autograd/tape.h"

namespace ag {

Shape broadcast_shape(std::string_view op, const arma::mat& a, const arma::mat& b) {
  auto dim = [&](arma::uword x, arma::uword y, const char* which) {
    if (x == y || y == 1) return x;
    if (x == 1) return y;
    throw Error(std::string(op) + ": shapes " + shape_str(a) + " and " + shape_str(b) +
                " do not broadcast: their " + which + " differ and neither is 1");
  };
  return Shape{dim(a.n_rows, b.n_rows, "row counts"), dim(a.n_cols, b.n_cols, "column counts")};
}

arma::mat expand(const arma::mat& m, Shape to) {
  if (m.n_rows == to.rows && m.n_cols == to.cols) return m;
  // Repeating a 1x0 up to 3x0 would divide by its 0 columns.
  if (to.rows == 0 || to.cols == 0) return arma::mat(to.rows, to.cols);
  return arma::repmat(m, to.rows / m.n_rows, to.cols / m.n_cols);
}

arma::mat sum_to(const arma::mat& g, arma::uword rows, arma::uword cols) {
  if (g.n_rows == rows && g.n_cols == cols) return g;
  if (rows == 1 && cols == 1) return arma::mat(1, 1, arma::fill::value(arma::accu(g)));
  if (rows == 1) return arma::sum(g, 0);  // a repeated row: sum down each column
  return arma::sum(g, 1);                 // a repeated column: sum across each row
}

}  // namespace ag

namespace ag {

void accumulate_unbroadcast(Tape& tape, std::size_t id, const arma::mat& g) {
  const arma::mat& v = tape.value(id);
  if (g.n_rows == v.n_rows && g.n_cols == v.n_cols) {
    tape.accumulate(id, g);
  } else {
    tape.accumulate(id, sum_to(g, v.n_rows, v.n_cols));
  }
}

void accumulate_unbroadcast(Tape& tape, std::size_t id, arma::mat&& g) {
  const arma::mat& v = tape.value(id);
  if (g.n_rows == v.n_rows && g.n_cols == v.n_cols) {
    tape.accumulate(id, std::move(g));  // a temporary: becomes the gradient without a copy
  } else {
    accumulate_unbroadcast(tape, id, static_cast<const arma::mat&>(g));
  }
}

}  // namespace ag
