// The seeded toy generators declared in data/datasets.h.
#include <cmath>

#include "autograd/tape.h"
#include "data/datasets.h"

namespace ag {

namespace {
Dataset empty_dataset(const std::string& name, arma::uword n, arma::uword d, Task task, arma::uword classes) {
  Dataset data;
  data.name = name;
  data.x.set_size(n, d);
  data.y.set_size(n, 1);
  data.task = task;
  data.classes = classes;
  return data;
}

void check_size(const char* what, arma::uword n) {
  if (n == 0) throw Error(std::string(what) + ": the number of samples must be positive");
}
}  // namespace

Dataset make_moons(arma::uword n, double noise, Rng& rng) {
  check_size("make_moons", n);
  Dataset d = empty_dataset("moons", n, 2, Task::Classification, 2);
  const arma::uword n_outer = n / 2;
  for (arma::uword i = 0; i < n; ++i) {
    const bool outer = i < n_outer;
    const arma::uword k = outer ? i : i - n_outer;
    const arma::uword count = outer ? n_outer : n - n_outer;
    const double t = count > 1 ? M_PI * static_cast<double>(k) / static_cast<double>(count - 1) : 0.0;
    // Outer moon: the upper half circle; inner moon: the lower one shifted right and up.
    d.x(i, 0) = outer ? std::cos(t) : 1.0 - std::cos(t);
    d.x(i, 1) = outer ? std::sin(t) : 0.5 - std::sin(t);
    d.x(i, 0) += noise * rng.normal();
    d.x(i, 1) += noise * rng.normal();
    d.y(i) = outer ? 0.0 : 1.0;
  }
  return d;
}

Dataset make_circles(arma::uword n, double noise, double factor, Rng& rng) {
  check_size("make_circles", n);
  Dataset d = empty_dataset("circles", n, 2, Task::Classification, 2);
  const arma::uword n_outer = n / 2;
  for (arma::uword i = 0; i < n; ++i) {
    const bool outer = i < n_outer;
    const double t = 2.0 * M_PI * rng.uniform();
    const double r = outer ? 1.0 : factor;
    d.x(i, 0) = r * std::cos(t) + noise * rng.normal();
    d.x(i, 1) = r * std::sin(t) + noise * rng.normal();
    d.y(i) = outer ? 0.0 : 1.0;
  }
  return d;
}

Dataset make_spirals(arma::uword n_per_arm, arma::uword arms, double noise, Rng& rng) {
  check_size("make_spirals", n_per_arm * arms);
  Dataset d = empty_dataset("spirals", n_per_arm * arms, 2, Task::Classification, arms);
  const double turn = 4.0;  // radians of angle each arm sweeps
  for (arma::uword arm = 0; arm < arms; ++arm) {
    for (arma::uword k = 0; k < n_per_arm; ++k) {
      const double s = n_per_arm > 1 ? static_cast<double>(k) / static_cast<double>(n_per_arm - 1) : 0.0;
      const double t = turn * (static_cast<double>(arm) + s) + noise * rng.normal();
      const arma::uword i = arm * n_per_arm + k;
      d.x(i, 0) = s * std::sin(t);  // radius s grows along the arm
      d.x(i, 1) = s * std::cos(t);
      d.y(i) = static_cast<double>(arm);
    }
  }
  return d;
}

Dataset make_xor(arma::uword n, double noise, Rng& rng) {
  check_size("make_xor", n);
  Dataset d = empty_dataset("xor", n, 2, Task::Classification, 2);
  for (arma::uword i = 0; i < n; ++i) {
    const double a = rng.uniform(-1.0, 1.0), b = rng.uniform(-1.0, 1.0);
    d.y(i) = a * b > 0 ? 1.0 : 0.0;
    d.x(i, 0) = a + noise * rng.normal();
    d.x(i, 1) = b + noise * rng.normal();
  }
  return d;
}

Dataset make_sine(arma::uword n, double noise, Rng& rng) {
  check_size("make_sine", n);
  Dataset d = empty_dataset("sine", n, 1, Task::Regression, 0);
  for (arma::uword i = 0; i < n; ++i) {
    d.x(i, 0) = rng.uniform(-3.0, 3.0);
    d.y(i) = std::sin(d.x(i, 0)) + noise * rng.normal();
  }
  return d;
}

}  // namespace ag
