#include "train/metrics.h"

#include <cmath>
#include <cstdio>

namespace ag {

std::string csv_number(double v) {
  if (std::isnan(v)) return "nan";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.17g", v);
  return buffer;
}

namespace {

const auto number = csv_number;

std::string row(const EpochMetrics& m) {
  return std::to_string(m.epoch) + "," + number(m.train_loss) + "," + number(m.val_loss) + "," +
         number(m.train_accuracy) + "," + number(m.val_accuracy) + "," + number(m.seconds) + "\n";
}

const char* kColumns = "epoch,train_loss,val_loss,train_accuracy,val_accuracy,seconds\n";

double worse(double current, double a, double b) {
  const double d = std::fabs(a - b);
  return std::isnan(d) ? current : std::max(current, d);
}

}  // namespace

std::string metrics_csv(const std::vector<EpochMetrics>& history) {
  std::string text = kColumns;
  for (const EpochMetrics& m : history) text += row(m);
  return text;
}

std::string compare_csv(const std::vector<Curve>& curves) {
  std::string text = std::string("run,") + kColumns;
  for (const Curve& c : curves) {
    for (const EpochMetrics& m : c.history) text += c.label + "," + row(m);
  }
  return text;
}

std::string epoch_line(const EpochMetrics& m, int epochs) {
  char buffer[160];
  const int width = static_cast<int>(std::to_string(epochs).size());
  if (std::isnan(m.train_accuracy)) {
    std::snprintf(buffer, sizeof buffer, "epoch %*d/%d  train loss %.4f  val loss %.4f  %.2fs", width, m.epoch,
                  epochs, m.train_loss, m.val_loss, m.seconds);
  } else {
    std::snprintf(buffer, sizeof buffer, "epoch %*d/%d  train loss %.4f  acc %6.2f%%  val loss %.4f  acc %6.2f%%  %.2fs",
                  width, m.epoch, epochs, m.train_loss, 100 * m.train_accuracy, m.val_loss, 100 * m.val_accuracy,
                  m.seconds);
  }
  return buffer;
}

CurveDifference curve_difference(const std::vector<EpochMetrics>& a, const std::vector<EpochMetrics>& b) {
  CurveDifference d;
  double worst = -1;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    d.train_loss = worse(d.train_loss, a[i].train_loss, b[i].train_loss);
    d.val_loss = worse(d.val_loss, a[i].val_loss, b[i].val_loss);
    d.train_accuracy = worse(d.train_accuracy, a[i].train_accuracy, b[i].train_accuracy);
    d.val_accuracy = worse(d.val_accuracy, a[i].val_accuracy, b[i].val_accuracy);
    const double loss_gap = worse(worse(0, a[i].train_loss, b[i].train_loss), a[i].val_loss, b[i].val_loss);
    if (loss_gap > worst) {
      worst = loss_gap;
      d.worst_loss_epoch = a[i].epoch;
    }
  }
  return d;
}

}  // namespace ag
