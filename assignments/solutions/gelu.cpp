// Reference solution: GELU (tanh approximation) backward.
// dx = dy (0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3 * 0.044715 x^2)), t = tanh(u).
#include "assignments/gelu/gelu.h"

#include <cmath>

arma::mat gelu_backward(const arma::mat& x, const arma::mat& dy) {
  const double c = std::sqrt(2.0 / M_PI), a = 0.044715;
  const arma::mat t = arma::tanh(c * (x + a * arma::pow(x, 3)));
  const arma::mat du = c * (1 + 3 * a * arma::square(x));                 // du/dx
  const arma::mat slope = 0.5 * (1 + t) + 0.5 * x % (1 - arma::square(t)) % du;  // through x, then through tanh(u)
  return dy % slope;
}
