#include "nn/schedule.h"

#include <cmath>

#include "autograd/tape.h"

namespace ag {

double Schedule::at(int epoch) const {
  switch (kind) {
    case Kind::Step:
      return lr * std::pow(gamma, static_cast<double>(epoch / (step_size > 0 ? step_size : 1)));
    case Kind::Cosine: {
      const double progress = static_cast<double>(epoch) / static_cast<double>(epochs > 0 ? epochs : 1);
      return min_lr + (lr - min_lr) * 0.5 * (1.0 + std::cos(M_PI * progress));
    }
    case Kind::Constant: break;
  }
  return lr;
}

Schedule::Kind parse_schedule(const std::string& name) {
  if (name == "constant") return Schedule::Kind::Constant;
  if (name == "step") return Schedule::Kind::Step;
  if (name == "cosine") return Schedule::Kind::Cosine;
  throw Error("unknown schedule '" + name + "' (expected constant, step or cosine)");
}

}  // namespace ag
