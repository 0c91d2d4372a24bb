// Datasets: seeded toy generators, the shipped digits, CSV files; splitting and batching.
//
// Features are one sample per row (N x D). Targets y are N x 1: the class
// index (0 .. classes-1) for classification, the value for regression.
#pragma once

#include <armadillo>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "autograd/rng.h"

namespace ag {

enum class Task { Classification, Regression };

struct Dataset {
  std::string name;
  arma::mat x;  // N x D
  arma::mat y;  // N x 1
  Task task = Task::Classification;
  arma::uword classes = 0;  // 0 for regression

  arma::uword size() const { return x.n_rows; }
  arma::uword features() const { return x.n_cols; }
  arma::uvec labels() const;            // y as class indices
  arma::uvec labels(const arma::uvec& rows) const;
};

// Two interleaving half circles (as sklearn's make_moons), n samples, Gaussian noise sd `noise`.
Dataset make_moons(arma::uword n, double noise, Rng& rng);
// A circle inside another of radius 1; the inner radius is `factor`.
Dataset make_circles(arma::uword n, double noise, double factor, Rng& rng);
// `arms` spiral arms, one class each, n_per_arm points each, angle noise `noise` (CS231n's spirals).
Dataset make_spirals(arma::uword n_per_arm, arma::uword arms, double noise, Rng& rng);
// Two interleaved arms (TensorFlow Playground's spiral): radius s from 0 to 1, angle 3.5 pi s
// (plus pi for class 1), Gaussian noise sd `noise` on each coordinate.
Dataset make_two_spirals(arma::uword n, double noise, Rng& rng);
// Points in [-1, 1]^2, class 1 where x0 x1 > 0 (the quadrants of XOR), then jittered by `noise`.
Dataset make_xor(arma::uword n, double noise, Rng& rng);
// Regression: x uniform in [-3, 3], y = sin(x) + noise.
Dataset make_sine(arma::uword n, double noise, Rng& rng);
// Two Gaussian clouds around (-1, -1) (class 0) and (1, 1) (class 1), sd 0.25 + noise.
Dataset make_blobs(arma::uword n, double noise, Rng& rng);

// A CSV file with a header row. The label column is named by its header,
// by its 1-based number, or (empty) is the last column; every other column is
// a feature. Whole-number labels 0, 1, 2 ... make it classification (at most
// kMaxClasses classes: a larger whole number is refused), anything else
// regression. Throws DataError naming the file (and row and column of a bad cell).
constexpr arma::uword kMaxClasses = 1000;
Dataset load_csv_dataset(const std::string& path, const std::string& label_column = "");

// Dataset names the command line accepts ("moons", ..., "digits"); anything
// ending in .csv is a file (data/named_datasets.cpp).
const std::vector<std::string>& dataset_names();
// The generated sets ("moons", ... "sine"): their points come from Rng stream 1
// of the seed alone, so every platform draws the same points (to the last bit
// where the platforms' sin, cos and log agree, which they do to 1 ulp).
const std::vector<std::string>& generated_dataset_names();
bool is_generated_dataset(const std::string& name);

// A generated set's sample count and noise; unset, the set's own (moons: 1000 points, noise 0.15).
struct GeneratedSize {
  std::optional<long long> points;
  std::optional<double> noise;
};
constexpr long long kMaxGeneratedPoints = 100000;
constexpr double kMaxNoise = 10;

// A generated set by name. Throws DataError for another name or a size out of range.
Dataset make_generated(const std::string& name, std::uint64_t seed, const GeneratedSize& size = {});
// Any set by name. Throws DataError for an unknown name, or a size for a set that is not generated or out of range.
Dataset make_dataset(const std::string& name_or_csv, std::uint64_t seed, const std::string& label_column = "",
                     const GeneratedSize& size = {});

Dataset subset(const Dataset& data, const arma::uvec& rows);

struct Split {
  Dataset train;
  Dataset validation;
};
// Shuffles, then puts round(fraction N) samples in validation (at least 1 each side when N >= 2).
Split train_validation_split(const Dataset& data, double validation_fraction, Rng& rng);

// A fresh permutation of 0..n-1 cut into batches of batch_size (the last one may be smaller).
std::vector<arma::uvec> shuffled_batches(arma::uword n, arma::uword batch_size, Rng& rng);

}  // namespace ag
