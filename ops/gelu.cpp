#include "ops/gelu.h"

#include <cmath>

#include "ops/elementwise.h"

namespace ag {

Var gelu(Var x) {
  const double c = std::sqrt(2.0 / M_PI);
  Var inner = c * (x + 0.044715 * pow_scalar(x, 3.0));
  return 0.5 * x * (1.0 + tanh(inner));
}

}  // namespace ag
