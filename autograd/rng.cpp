#include "autograd/rng.h"

#include <cmath>

namespace ag {

double Rng::uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }

double Rng::uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }

double Rng::normal() {
  // Box-Muller: two uniforms give one normal (the second is discarded, for simplicity).
  const double u1 = 1.0 - uniform();  // (0, 1], so log is finite
  const double u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

std::uint64_t Rng::below(std::uint64_t n) {
  // Reject the top partial block of 2^64 so every value is equally likely.
  const std::uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  std::uint64_t r = engine_();
  while (r >= limit) r = engine_();
  return r % n;
}

arma::uvec Rng::permutation(arma::uword n) {
  arma::uvec p = arma::regspace<arma::uvec>(0, n == 0 ? 0 : n - 1);
  if (n == 0) p.reset();
  for (arma::uword i = n; i > 1; --i) std::swap(p(i - 1), p(below(i)));
  return p;
}

arma::mat Rng::uniform(arma::uword rows, arma::uword cols, double lo, double hi) {
  arma::mat m(rows, cols);
  for (double& v : m) v = uniform(lo, hi);
  return m;
}

arma::mat Rng::normal(arma::uword rows, arma::uword cols, double sd) {
  arma::mat m(rows, cols);
  for (double& v : m) v = sd * normal();
  return m;
}

std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t stream) {
  // splitmix64 of (seed, stream): nearby seeds give unrelated streams.
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ULL + stream + 0x632BE59BD9B4E019ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace ag
