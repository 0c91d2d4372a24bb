// The seeded toy generators declared in data/datasets.h.
#include <cmath>

#include "autograd/format.h"
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

Dataset make_two_spirals(arma::uword n, double noise, Rng& rng) {
  check_size("make_two_spirals", n);
  Dataset d = empty_dataset("spiral", n, 2, Task::Classification, 2);
  const arma::uword half = n / 2;
  for (arma::uword i = 0; i < n; ++i) {
    const bool second = i >= half;
    const arma::uword k = second ? i - half : i, count = second ? n - half : half;
    const double s = count > 1 ? static_cast<double>(k) / static_cast<double>(count - 1) : 0.0;
    const double t = 3.5 * M_PI * s + (second ? M_PI : 0.0);  // 1.75 turns; the second arm half a turn on
    d.x(i, 0) = s * std::cos(t) + noise * rng.normal();
    d.x(i, 1) = s * std::sin(t) + noise * rng.normal();
    d.y(i) = second ? 1.0 : 0.0;
  }
  return d;
}

Dataset make_blobs(arma::uword n, double noise, Rng& rng) {
  check_size("make_blobs", n);
  Dataset d = empty_dataset("blobs", n, 2, Task::Classification, 2);
  const double sd = 0.25 + noise;
  for (arma::uword i = 0; i < n; ++i) {
    const bool second = i >= n / 2;
    const double centre = second ? 1.0 : -1.0;
    d.x(i, 0) = centre + sd * rng.normal();
    d.x(i, 1) = centre + sd * rng.normal();
    d.y(i) = second ? 1.0 : 0.0;
  }
  return d;
}

namespace {

struct Generator {
  const char* name;
  long long points;  // the default count
  double noise;      // the default noise
  Dataset (*make)(arma::uword points, double noise, Rng& rng);
};

// "spirals" is CS231n's three arms; "spiral" TensorFlow Playground's two.
const std::vector<Generator>& generators() {
  static const std::vector<Generator> all = {
      {"moons", 1000, 0.15, [](arma::uword n, double s, Rng& r) { return make_moons(n, s, r); }},
      {"circles", 1000, 0.08, [](arma::uword n, double s, Rng& r) { return make_circles(n, s, 0.5, r); }},
      {"spirals", 900, 0.2, [](arma::uword n, double s, Rng& r) { return make_spirals(n / 3, 3, s, r); }},
      {"spiral", 1000, 0.05, [](arma::uword n, double s, Rng& r) { return make_two_spirals(n, s, r); }},
      {"xor", 1000, 0.05, [](arma::uword n, double s, Rng& r) { return make_xor(n, s, r); }},
      {"blobs", 1000, 0.25, [](arma::uword n, double s, Rng& r) { return make_blobs(n, s, r); }},
      {"sine", 500, 0.1, [](arma::uword n, double s, Rng& r) { return make_sine(n, s, r); }},
  };
  return all;
}

std::string one_of(const std::vector<std::string>& names) {
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i) text += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return text;
}

const Generator* find_generator(const std::string& name) {
  for (const Generator& g : generators()) {
    if (name == g.name) return &g;
  }
  return nullptr;
}

void check_points(const std::string& name, const GeneratedSize& size) {
  if (size.points && (*size.points < 4 || *size.points > kMaxGeneratedPoints)) {
    throw DataError(name + ": the number of points must be from 4 to " + std::to_string(kMaxGeneratedPoints) + ", got " +
                    std::to_string(*size.points));
  }
  if (size.noise && !(*size.noise >= 0 && *size.noise <= kMaxNoise)) {
    throw DataError(name + ": the noise must be from 0 to " + format_number(kMaxNoise) + ", got " + format_number(*size.noise));
  }
}

}  // namespace

const std::vector<std::string>& generated_dataset_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const Generator& g : generators()) n.push_back(g.name);
    return n;
  }();
  return names;
}

bool is_generated_dataset(const std::string& name) { return find_generator(name) != nullptr; }

Dataset make_generated(const std::string& name, std::uint64_t seed, const GeneratedSize& size) {
  const Generator* generator = find_generator(name);
  if (!generator) throw DataError("'" + name + "' is not a generated dataset (expected " + one_of(generated_dataset_names()) + ")");
  check_points(name, size);
  Rng rng(derive_seed(seed, 1));
  const long long points = size.points.value_or(generator->points);
  return generator->make(static_cast<arma::uword>(points), size.noise.value_or(generator->noise), rng);
}


}  // namespace ag
