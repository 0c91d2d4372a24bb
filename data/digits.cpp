#include "data/digits.h"

#include <boost/iostreams/filter/gzip.hpp>
#include <boost/iostreams/filtering_stream.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include "autograd/error.h"
#include "data/resources.h"

namespace ag {

std::string default_digits_path() { return shipped_file("data/digits/digits.csv.gz"); }

namespace {

constexpr arma::uword kPixels = 64;

// One line "p1,...,p64,label" into row `row` of x and y.
void parse_line(const std::string& path, const std::string& line, arma::uword row, arma::mat& x, arma::mat& y) {
  std::stringstream cells(line);
  std::string cell;
  arma::uword col = 0;
  while (std::getline(cells, cell, ',')) {
    char* end = nullptr;
    const double v = std::strtod(cell.c_str(), &end);
    const bool ok = !cell.empty() && *end == '\0' && v >= 0 && v <= (col < kPixels ? 16 : 9);
    if (!ok || col > kPixels) {
      throw DataError(path + ": line " + std::to_string(row + 1) + ", column " + std::to_string(col + 1) +
                      ": '" + cell + "' is not " + (col < kPixels ? "a pixel count 0..16" : "a digit 0..9"));
    }
    if (col < kPixels) x(row, col) = v / 16.0;  // pixel counts 0..16 scaled to [0, 1]
    else y(row) = v;
    ++col;
  }
  if (col != kPixels + 1) {
    throw DataError(path + ": line " + std::to_string(row + 1) + " has " + std::to_string(col) +
                    " values, expected 65 (64 pixels and the label)");
  }
}

}  // namespace

Dataset load_digits(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw DataError(path + ": cannot open the digits file (it ships in data/digits/)");
  std::vector<std::string> lines;
  try {
    boost::iostreams::filtering_istream in;
    in.push(boost::iostreams::gzip_decompressor());
    in.push(file);
    std::string line;
    while (std::getline(in, line)) {
      if (!line.empty()) lines.push_back(line);
    }
  } catch (const boost::iostreams::gzip_error& e) {
    throw DataError(path + ": not a valid gzip file (" + e.what() + ")");
  }
  Dataset d;
  d.name = "digits";
  d.task = Task::Classification;
  d.classes = 10;
  d.x.set_size(lines.size(), kPixels);
  d.y.set_size(lines.size(), 1);
  for (arma::uword i = 0; i < lines.size(); ++i) parse_line(path, lines[i], i, d.x, d.y);
  if (lines.empty()) throw DataError(path + ": no samples in the digits file");
  return d;
}

}  // namespace ag
