#include "ops/losses.h"

#include "ops/elementwise.h"
#include "ops/reduce.h"

namespace ag {

namespace {
void check_rows(const char* loss, Var pred, arma::uword rows, arma::uword cols, const char* what) {
  if (pred.rows() != rows || pred.cols() != cols) {
    throw Error(std::string(loss) + ": the prediction is " + pred.shape() + " but the " + what + " are " +
                shape_str(rows, cols) + "; expected the same shape");
  }
}

// Every loss is a mean over the batch, and a mean of nothing has no value.
void check_not_empty(const char* loss, Var pred, const char* what) {
  if (pred.value().is_empty()) {
    throw Error(std::string(loss) + ": the batch is empty (" + what + " " + pred.shape() +
                "); a mean over no elements has no value");
  }
}
}  // namespace

Var mse(Var pred, const arma::mat& target) {
  Tape& tape = tape_of("mse", pred);
  check_rows("mse", pred, target.n_rows, target.n_cols, "targets");
  check_not_empty("mse", pred, "prediction");
  return mean(square(pred - tape.constant(target, "target")));
}

arma::mat one_hot(const arma::uvec& labels, arma::uword classes) {
  arma::mat m(labels.n_elem, classes, arma::fill::zeros);
  for (arma::uword i = 0; i < labels.n_elem; ++i) {
    if (labels(i) >= classes) {
      throw Error("one_hot: label " + std::to_string(labels(i)) + " in row " + std::to_string(i) +
                  " is not below the number of classes " + std::to_string(classes));
    }
    m(i, labels(i)) = 1.0;
  }
  return m;
}

Var softmax_cross_entropy(Var logits, const arma::uvec& labels) {
  Tape& tape = tape_of("softmax_cross_entropy", logits);
  if (labels.n_elem != logits.rows()) {
    throw Error("softmax_cross_entropy: the logits are " + logits.shape() + " but there are " +
                std::to_string(labels.n_elem) + " labels; expected one label per row");
  }
  if (logits.cols() == 0 && logits.rows() > 0) {
    throw Error("softmax_cross_entropy: the logits are " + logits.shape() + ": 0 classes to choose from");
  }
  check_not_empty("softmax_cross_entropy", logits, "logits");
  // z_i[y_i] = sum_j z_ij * onehot_ij: picks each row's target logit.
  Var target = tape.constant(one_hot(labels, logits.cols()), "one_hot");
  Var picked = sum(logits * target, 1);
  return mean(logsumexp(logits, 1) - picked);
}

Var bce_with_logits(Var logits, const arma::mat& targets) {
  Tape& tape = tape_of("bce_with_logits", logits);
  check_rows("bce_with_logits", logits, targets.n_rows, targets.n_cols, "targets");
  check_not_empty("bce_with_logits", logits, "logits");
  // max(z, 0) = z * [z >= 0] and |z| = z * sign(z), with the masks taken from
  // the values as constants. Counting z = 0 as positive makes the derivative
  // there sigmoid(0) - t = 0.5 - t, the true one.
  const arma::mat mask = arma::conv_to<arma::mat>::from(logits.value() >= 0.0);
  Var positive = tape.constant(mask, "z>=0");
  Var sign = tape.constant(2.0 * mask - 1.0, "sign(z)");
  Var softplus = logits * positive + log(1.0 + exp(-(logits * sign)));
  return mean(softplus - logits * tape.constant(targets, "target"));
}

double accuracy(const arma::mat& logits, const arma::uvec& labels) {
  if (labels.n_elem != logits.n_rows) {
    throw Error("accuracy: the logits are " + shape_str(logits) + " but there are " + std::to_string(labels.n_elem) +
                " labels; expected one label per row");
  }
  if (labels.n_elem == 0) return 0.0;
  if (logits.n_cols == 0) throw Error("accuracy: the logits are " + shape_str(logits) + ": 0 classes to choose from");
  const arma::uvec predicted = arma::index_max(logits, 1);
  return static_cast<double>(arma::accu(predicted == labels)) / static_cast<double>(labels.n_elem);
}

}  // namespace ag
