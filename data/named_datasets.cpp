// The datasets by name (data/datasets.h): the generated ones, the shipped
// digits, and CSV files. (Apart from data/toy_datasets.cpp so that a program
// that only generates, the training page's WebAssembly module, needs no zlib.)
#include "autograd/format.h"
#include "autograd/tape.h"
#include "data/datasets.h"
#include "data/digits.h"

namespace ag {

const std::vector<std::string>& dataset_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n = generated_dataset_names();
    n.push_back("digits");
    return n;
  }();
  return names;
}

Dataset make_dataset(const std::string& name, std::uint64_t seed, const std::string& label_column,
                     const GeneratedSize& size) {
  const bool csv = name.size() > 4 && name.compare(name.size() - 4, 4, ".csv") == 0;
  if (!csv && !label_column.empty()) {
    throw DataError("a label column ('" + label_column + "') applies only to a FILE.csv dataset, not '" + name + "'");
  }
  if (is_generated_dataset(name)) return make_generated(name, seed, size);
  if (size.points || size.noise) {
    throw DataError("the number of points and the noise apply only to a generated dataset (moons, circles, spirals, "
                    "spiral, xor, blobs, sine), not '" + name + "'");
  }
  if (name == "digits") return load_digits();
  if (csv) return load_csv_dataset(name, label_column);
  throw DataError("unknown dataset '" + name +
                  "' (expected moons, circles, spirals, spiral, xor, blobs, sine, digits or a FILE.csv)");
}

}  // namespace ag
