// The one random number generator of modules, data and training.
//
// std::mt19937_64 produces the same bits on every platform, but the standard
// distributions (normal, uniform_real, shuffle) are implementation-defined.
// So the draws below are written out: the same seed gives the same
// initialisation, the same data and the same batches everywhere.
#pragma once

#include <armadillo>

#include <cstdint>
#include <random>

namespace ag {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : engine_(seed) {}

  double uniform();                        // [0, 1), 53 random bits
  double uniform(double lo, double hi);    // [lo, hi)
  double normal();                         // mean 0, sd 1 (Box-Muller)
  std::uint64_t below(std::uint64_t n);    // 0 .. n-1, without modulo bias
  arma::uvec permutation(arma::uword n);   // Fisher-Yates
  arma::mat uniform(arma::uword rows, arma::uword cols, double lo, double hi);
  arma::mat normal(arma::uword rows, arma::uword cols, double sd);

 private:
  std::mt19937_64 engine_;
};

// An independent stream for one purpose ("init", "data", "batches"), so adding
// a draw in one place does not shift the others.
std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t stream);

}  // namespace ag
