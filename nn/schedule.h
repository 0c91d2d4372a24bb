// Learning-rate schedules: the rate for each epoch (0-based), set before it starts.
//   constant: lr
//   step:     lr * gamma^floor(epoch / step_size)
//   cosine:   min_lr + (lr - min_lr) (1 + cos(pi epoch / epochs)) / 2
#pragma once

#include <string>

namespace ag {

struct Schedule {
  enum class Kind { Constant, Step, Cosine };
  Kind kind = Kind::Constant;
  double lr = 1e-3;
  int step_size = 10;  // step: epochs between decays
  double gamma = 0.1;  // step: the factor at each decay
  int epochs = 1;      // cosine: the length of the half period
  double min_lr = 0.0; // cosine: the rate it ends at

  double at(int epoch) const;
};

Schedule::Kind parse_schedule(const std::string& name);  // throws Error on an unknown name

}  // namespace ag
