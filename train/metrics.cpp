#include "train/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ag {

const char* axis_name(TimeAxis axis) { return axis == TimeAxis::Step ? "step" : "epoch"; }

double x_of(const Metrics& m, TimeAxis axis) { return axis == TimeAxis::Step ? static_cast<double>(m.step) : m.epoch; }

std::string csv_number(double v) {
  if (std::isnan(v)) return "nan";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.17g", v);
  return buffer;
}

namespace {

const auto number = csv_number;

std::string row(const Metrics& m, TimeAxis axis) {
  if (axis == TimeAxis::Step) {
    return std::to_string(m.step) + "," + number(m.epoch) + "," + number(m.train_loss) + "," + number(m.val_loss) +
           "," + number(m.seconds) + "\n";
  }
  return std::to_string(static_cast<long long>(m.epoch)) + "," + number(m.train_loss) + "," + number(m.val_loss) +
         "," + number(m.train_accuracy) + "," + number(m.val_accuracy) + "," + number(m.seconds) + "\n";
}

std::string columns(TimeAxis axis) {
  return axis == TimeAxis::Step ? "step,epoch,train_loss,val_loss,seconds\n"
                            : "epoch,train_loss,val_loss,train_accuracy,val_accuracy,seconds\n";
}

double worse(double current, double a, double b) {
  const double d = std::fabs(a - b);
  return std::isnan(d) ? current : std::max(current, d);
}

}  // namespace

std::string metrics_csv(const std::vector<Metrics>& history, TimeAxis axis) {
  std::string text = columns(axis);
  for (const Metrics& m : history) text += row(m, axis);
  return text;
}

std::string compare_csv(const std::vector<Curve>& curves, TimeAxis axis) {
  std::string text = "run," + columns(axis);
  for (const Curve& c : curves) {
    for (const Metrics& m : c.history) text += c.label + "," + row(m, axis);
  }
  return text;
}

std::string metrics_line(const Metrics& m, TimeAxis axis, long long last) {
  char buffer[200];
  const int width = static_cast<int>(std::to_string(last).size());
  if (axis == TimeAxis::Step) {
    std::snprintf(buffer, sizeof buffer, "step %*lld/%lld  epoch %.2f  train loss %.4f  val loss %.4f  %.1fs", width,
                  m.step, last, m.epoch, m.train_loss, m.val_loss, m.seconds);
  } else if (std::isnan(m.train_accuracy)) {
    std::snprintf(buffer, sizeof buffer, "epoch %*lld/%lld  train loss %.4f  val loss %.4f  %.2fs", width,
                  static_cast<long long>(m.epoch), last, m.train_loss, m.val_loss, m.seconds);
  } else {
    std::snprintf(buffer, sizeof buffer,
                  "epoch %*lld/%lld  train loss %.4f  acc %6.2f%%  val loss %.4f  acc %6.2f%%  %.2fs", width,
                  static_cast<long long>(m.epoch), last, m.train_loss, 100 * m.train_accuracy, m.val_loss,
                  100 * m.val_accuracy, m.seconds);
  }
  return buffer;
}

std::string epoch_line(const Metrics& m, long long epochs) { return metrics_line(m, TimeAxis::Epoch, epochs); }

CurveDifference curve_difference(const std::vector<Metrics>& a, const std::vector<Metrics>& b, TimeAxis axis) {
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
      d.worst_loss_at = x_of(a[i], axis);
    }
  }
  return d;
}

}  // namespace ag
