// The 8x8 handwritten digits shipped in data/digits/ (see its README.md for
// source and licence): 1797 samples, 64 pixel features scaled to [0, 1], 10 classes.
#pragma once

#include <string>

#include "data/datasets.h"

namespace ag {

// The shipped file data/digits/digits.csv.gz (data/resources.h says where it is looked for).
std::string default_digits_path();

// Reads the gzip-compressed CSV (64 pixels 0..16, then the label; no header).
// Throws DataError naming the file, and the line and column of a bad cell.
Dataset load_digits(const std::string& path = default_digits_path());

}  // namespace ag
