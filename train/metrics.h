// Training metrics as text: the CSV files and the one-line epoch summaries.
#pragma once

#include <string>
#include <vector>

#include "train/trainer.h"

namespace ag {

// One run's history, named for legends and for the compare CSV's `run` column.
struct Curve {
  std::string label;
  std::vector<EpochMetrics> history;
};

// "epoch,train_loss,val_loss,train_accuracy,val_accuracy,seconds" then one row
// per epoch; values printed with 17 significant digits so they round-trip exactly.
std::string metrics_csv(const std::vector<EpochMetrics>& history);

// One CSV value: 17 significant digits (round-trips exactly), "nan" for NaN.
std::string csv_number(double v);

// The same columns with a leading `run` column, every curve one after the other.
std::string compare_csv(const std::vector<Curve>& curves);

// "epoch  3/20  train loss 0.1234  acc 96.10%  val loss 0.1301  acc 95.83%  0.21s"
std::string epoch_line(const EpochMetrics& m, int epochs);

// The largest |a - b| between two curves, per column, and the epoch where it happens.
struct CurveDifference {
  double train_loss = 0, val_loss = 0, train_accuracy = 0, val_accuracy = 0;
  int worst_loss_epoch = 0;  // epoch of the largest loss difference (train or val)
};
CurveDifference curve_difference(const std::vector<EpochMetrics>& a, const std::vector<EpochMetrics>& b);

}  // namespace ag
