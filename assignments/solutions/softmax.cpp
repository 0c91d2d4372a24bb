// Reference solution: softmax backward. dx = y * (dy - sum_j dy_j y_j), per row.
#include "assignments/softmax/softmax.h"

arma::mat softmax_backward(const arma::mat& y, const arma::mat& dy) {
  const arma::vec s = arma::sum(dy % y, 1);  // <dy_i, y_i> for each row
  const arma::mat centred = dy.each_col() - s;
  return y % centred;
}
