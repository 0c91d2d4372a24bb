#include "nn/schedule.h"

#include <algorithm>
#include <cmath>

#include "autograd/tape.h"

namespace ag {

double Schedule::at(long long t) const {
  switch (kind) {
    case Kind::Step:
      return lr * std::pow(gamma, static_cast<double>(t / (step_size > 0 ? step_size : 1)));
    case Kind::Cosine: {
      if (t < warmup) return lr * static_cast<double>(t + 1) / static_cast<double>(warmup);
      const double progress = end - warmup <= 0 ? 1.0 : static_cast<double>(t - warmup) / static_cast<double>(end - warmup);
      return min_lr + (lr - min_lr) * 0.5 * (1 + std::cos(M_PI * std::min(progress, 1.0)));
    }
    case Kind::Constant: break;
  }
  return lr;
}

const char* schedule_name(Schedule::Kind kind) {
  return kind == Schedule::Kind::Step ? "step" : kind == Schedule::Kind::Cosine ? "cosine" : "constant";
}

Schedule::Kind parse_schedule(const std::string& name) {
  if (name == "constant") return Schedule::Kind::Constant;
  if (name == "step") return Schedule::Kind::Step;
  if (name == "cosine") return Schedule::Kind::Cosine;
  throw Error("unknown schedule '" + name + "' (expected constant, step or cosine)");
}

}  // namespace ag
