#include "assignments/kit/softmax_hints.h"

#include <vector>

namespace kit {

namespace {

struct SoftmaxVariant {
  NormHint named;
  arma::mat value;
};

// The wrong backwards, most specific first: where two agree on a case (one row makes the
// sum down the columns the diagonal one), the first names it.
std::vector<SoftmaxVariant> variants(const arma::mat& y, const arma::mat& dy) {
  const arma::vec row_dot = arma::sum(dy % y, 1);
  const arma::rowvec column_dot = arma::sum(dy % y, 0);
  const arma::vec row_sum = arma::sum(dy, 1);
  const double batch_dot = arma::accu(dy % y);
  const arma::mat ones(arma::size(y), arma::fill::ones);
  return {
      {{"missing sum term", "Yours is y * dy: the term - y * sum_j(dy_j y_j) is missing. Each output depends on "
                            "every input of its row (they share the normalisation), so dx_i = y_i (dy_i - sum_j dy_j y_j)."},
       y % dy},
      {{"diagonal only", "Yours uses only the Jacobian's diagonal, y_i (1 - y_i). Its off-diagonal entries, "
                         "-y_i y_j, are missing: dx_i = y_i (dy_i - sum_j dy_j y_j)."},
       y % (ones - y) % dy},
      {{"wrong sign, sum term", "The sum term has the wrong sign: dx = y * (dy - sum_j dy_j y_j), with a minus."},
       y % (dy.each_col() + row_dot)},
      {{"sum without y", "Your sum leaves y out: it is sum_j dy_j y_j (the dot product of dy and y in the row), "
                         "not sum_j dy_j."},
       y % (dy.each_col() - row_sum)},
      {{"log-softmax backward", "That is log_softmax's backward, dy - y * sum_j dy_j. Softmax's is "
                                "y * (dy - sum_j dy_j y_j)."},
       dy - y.each_col() % row_sum},
      {{"sum down the columns", "Your sum runs down the columns (over the batch's rows); it belongs across each row: "
                                "arma::sum(dy % y, 1), a column of N sums."},
       y % (dy.each_row() - column_dot)},
      {{"sum over the batch", "Your sum runs over the whole batch (accu); each row has its own: "
                              "arma::sum(dy % y, 1), one sum per row."},
       y % (dy - batch_dot)},
  };
}

}  // namespace

NormHint softmax_hint(const ExerciseSpec& spec, const DrawnCase& c, std::size_t k, const arma::mat& yours) {
  if (spec.hints != "softmax" || k != 0 || c.y.is_empty()) return {};
  for (const SoftmaxVariant& v : variants(c.y, c.dy)) {
    if (ag::diagnose_gradient(yours, v.value).correct()) return v.named;
  }
  return {};
}

}  // namespace kit
