// The learning-rate schedule: the rate at time t (0-based), set before that step.
// t counts epochs for a run that evaluates once an epoch (the MLP) and steps for
// one that evaluates within epochs (the GPT); the trainer picks (train/config.h).
//   constant: lr
//   step:     lr * gamma^floor(t / step_size)
//   cosine:   a linear warm-up, lr * (t + 1) / warmup for t < warmup; then
//             min_lr + (lr - min_lr) (1 + cos(pi p)) / 2 with p = (t - warmup) / (end - warmup),
//             capped at 1: min_lr is reached at t = end.
// The MLP's cosine has end = epochs (its last epoch, epochs - 1, stays above
// min_lr) and no warm-up; the GPT's is nanoGPT's: a warm-up of 200 steps, then
// down to lr / 10 at its last step.
#pragma once

#include <string>

namespace ag {

struct Schedule {
  enum class Kind { Constant, Step, Cosine };
  Kind kind = Kind::Constant;
  double lr = 1e-3;
  int step_size = 10;    // step: t between decays
  double gamma = 0.1;    // step: the factor at each decay
  long long warmup = 0;  // cosine: t of linear warm-up
  long long end = 1;     // cosine: the t at which the rate reaches min_lr
  double min_lr = 0.0;   // cosine: the rate it ends at

  double at(long long t) const;
};

const char* schedule_name(Schedule::Kind kind);            // "constant", "step", "cosine"
Schedule::Kind parse_schedule(const std::string& name);    // throws Error on an unknown name

}  // namespace ag
