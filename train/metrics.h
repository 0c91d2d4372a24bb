// The one metrics row of a run, and its text: the CSV files and the one-line summaries.
//
// A run evaluates before its first step (row 0: the validation loss and the
// first batch's loss at the initial weights, makemore's "first loss against
// log V"), then after every epoch (the MLP) or a few times an epoch (the GPT);
// each evaluation is one Metrics row. Its curves are drawn and written
// against epochs or steps: the TimeAxis.
#pragma once

#include <string>
#include <vector>

namespace ag {

struct Metrics {
  long long step = 0;        // steps taken so far
  double epoch = 0;          // passes over the training set so far: whole at the end of an epoch
  double train_loss = 0;     // mean per sample (target) over the steps since the last evaluation
  double val_loss = 0;       // on the whole validation set
  double train_accuracy = 0; // NaN for regression and for text
  double val_accuracy = 0;
  double seconds = 0;        // since training started (the one column that is not reproducible)
};

enum class TimeAxis { Epoch, Step };
const char* axis_name(TimeAxis axis);                // "epoch", "step"
double x_of(const Metrics& m, TimeAxis axis);        // m.epoch or m.step

// One run's history, named for legends and for the compare CSV's `run` column.
struct Curve {
  std::string label;
  std::vector<Metrics> history;
};

// TimeAxis::Epoch: "epoch,train_loss,val_loss,train_accuracy,val_accuracy,seconds";
// TimeAxis::Step: "step,epoch,train_loss,val_loss,seconds"; then one row per
// evaluation, values printed with 17 significant digits so they round-trip exactly.
std::string metrics_csv(const std::vector<Metrics>& history, TimeAxis axis = TimeAxis::Epoch);

// One CSV value: 17 significant digits (round-trips exactly), "nan" for NaN.
std::string csv_number(double v);

// The same columns with a leading `run` column, every curve one after the other.
std::string compare_csv(const std::vector<Curve>& curves, TimeAxis axis = TimeAxis::Epoch);

// TimeAxis::Epoch, of `last` epochs: "epoch  3/20  train loss 0.1234  acc 96.10%  val loss 0.1301  acc 95.83%  0.21s";
// TimeAxis::Step, of `last` steps:   "step   450/3594  epoch 0.25  train loss 2.4162  val loss 2.2631  31.2s".
std::string metrics_line(const Metrics& m, TimeAxis axis, long long last);
std::string epoch_line(const Metrics& m, long long epochs);  // metrics_line(m, TimeAxis::Epoch, epochs)

// The largest |a - b| between two curves, per column, and where (the x of TimeAxis) it happens.
struct CurveDifference {
  double train_loss = 0, val_loss = 0, train_accuracy = 0, val_accuracy = 0;
  double worst_loss_at = 0;  // x of the largest loss difference (train or val)
};
CurveDifference curve_difference(const std::vector<Metrics>& a, const std::vector<Metrics>& b, TimeAxis axis = TimeAxis::Epoch);

}  // namespace ag
