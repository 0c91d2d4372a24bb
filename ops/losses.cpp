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

// The losses record no node of their own: forward mode runs through their ops' rules.
const OpDef& mse_def() {
  static const OpDef def = composed_op("mse", 1, "y = mean((a - t)^2), t a fixed target",
                                       "derived by the tape: da = 2 (a - t) / n");
  return def;
}
Var mse(Var pred, const arma::mat& target) {
  const char* name = mse_def().name;
  Tape& tape = tape_of(name, pred);
  check_rows(name, pred, target.n_rows, target.n_cols, "targets");
  check_not_empty(name, pred, "prediction");
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

const OpDef& softmax_cross_entropy_def() {
  static const OpDef def = composed_op("softmax_cross_entropy", 1, "y = mean_i (logsumexp(a_i) - a_i[label_i])",
                                       "derived by the tape: da = (softmax(a) - onehot(label)) / N");
  return def;
}
Var softmax_cross_entropy(Var logits, const arma::uvec& labels) {
  const std::string name = softmax_cross_entropy_def().name;
  Tape& tape = tape_of(name.c_str(), logits);
  if (labels.n_elem != logits.rows()) {
    throw Error(name + ": the logits are " + logits.shape() + " but there are " +
                std::to_string(labels.n_elem) + " labels; expected one label per row");
  }
  if (logits.cols() == 0 && logits.rows() > 0) {
    throw Error(name + ": the logits are " + logits.shape() + ": 0 classes to choose from");
  }
  check_not_empty(name.c_str(), logits, "logits");
  // z_i[y_i] = sum_j z_ij * onehot_ij: picks each row's target logit.
  Var target = tape.constant(one_hot(labels, logits.cols()), "one_hot");
  Var picked = sum(logits * target, 1);
  return mean(logsumexp(logits, 1) - picked);
}

const OpDef& bce_with_logits_def() {
  static const OpDef def = composed_op("bce_with_logits", 1, "y = mean(softplus(a) - t a), t a fixed target",
                                       "derived by the tape: da = (sigmoid(a) - t) / n");
  return def;
}
Var bce_with_logits(Var logits, const arma::mat& targets) {
  const char* name = bce_with_logits_def().name;
  Tape& tape = tape_of(name, logits);
  check_rows(name, logits, targets.n_rows, targets.n_cols, "targets");
  check_not_empty(name, logits, "logits");
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
