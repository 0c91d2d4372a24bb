#include "data/digits.h"

#include <zlib.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <vector>

#include "autograd/error.h"
#include "data/resources.h"

namespace ag {

std::string default_digits_path() { return shipped_file("data/digits/digits.csv.gz"); }

namespace {

constexpr arma::uword kPixels = 64;
// The digits are 1797 lines (about 0.5 MB of text): far more is not them.
constexpr std::size_t kMaxBytes = std::size_t{64} << 20;

// The whole gzip file, inflated with zlib: a C library, so the data library
// links the same with libstdc++ or libc++ (Debian's compiled Boost.Iostreams
// holds libstdc++ strings in its gzip header, and crashed under libc++).
std::string gunzip(const std::string& path, std::ifstream& file) {
  const std::string packed((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (packed.size() > kMaxBytes) throw DataError(path + ": larger than 64 MB, which the digits are not");
  z_stream z{};
  if (inflateInit2(&z, 15 + 16) != Z_OK) throw DataError(path + ": zlib cannot start (out of memory)");  // 16: gzip
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(packed.data()));
  z.avail_in = static_cast<uInt>(packed.size());
  std::string text;
  std::vector<char> buffer(1 << 16);
  int rc = Z_OK;
  while (rc == Z_OK && text.size() <= kMaxBytes) {
    z.next_out = reinterpret_cast<Bytef*>(buffer.data());
    z.avail_out = static_cast<uInt>(buffer.size());
    rc = inflate(&z, Z_NO_FLUSH);
    text.append(buffer.data(), buffer.size() - z.avail_out);
  }
  const std::string why = z.msg != nullptr ? z.msg : rc == Z_BUF_ERROR ? "it ends early" : "it expands past 64 MB";
  inflateEnd(&z);
  if (rc != Z_STREAM_END) throw DataError(path + ": not a valid gzip file (" + why + ")");
  return text;
}

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
  std::istringstream in(gunzip(path, file));
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
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
