#include "data/csv.h"
#include "data/files.h"

#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace ag {

namespace {

std::string trim(const std::string& s) {
  const std::size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const std::size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (;;) {
    const std::size_t at = s.find(sep, start);
    parts.push_back(trim(s.substr(start, at == std::string::npos ? std::string::npos : at - start)));
    if (at == std::string::npos) return parts;
    start = at + 1;
  }
}

// A quoted cell for messages, cut short so a binary file cannot flood the terminal.
std::string quoted(const std::string& cell) {
  std::string shown = cell.size() > 40 ? cell.substr(0, 40) + "..." : cell;
  for (char& c : shown) {
    if (static_cast<unsigned char>(c) < 32 || static_cast<unsigned char>(c) > 126) c = '?';
  }
  return "'" + shown + "'";
}

// One cell as a finite double; `where` is "FILE: row R, column C" or similar.
// Only decimal notation: strtod alone would also take "nan", "inf" and hex.
double parse_cell(const std::string& cell, const std::string& where) {
  if (cell.empty()) throw DataError(where + ": missing value (empty cell)");
  bool digit = false;
  for (char c : cell) {
    if (c >= '0' && c <= '9') {
      digit = true;
    } else if (std::strchr("+-.eE", c) == nullptr) {
      throw DataError(where + ": " + quoted(cell) + " is not a number");
    }
  }
  if (!digit) throw DataError(where + ": " + quoted(cell) + " is not a number");
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(cell.c_str(), &end);
  if (end != cell.c_str() + cell.size()) throw DataError(where + ": " + quoted(cell) + " is not a number");
  if (!std::isfinite(v)) throw DataError(where + ": " + quoted(cell) + " is out of range for a double");
  return v;
}

// Rows of equal length, row-major, into a matrix (sized from what was parsed, never from the input's claims).
arma::mat to_matrix(const std::vector<double>& values, std::size_t rows, std::size_t cols) {
  arma::mat m(rows, cols);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < cols; ++c) m(r, c) = values[r * cols + c];
  }
  return m;
}

std::string ragged(const std::string& where, std::size_t got, std::size_t expected, const std::string& first) {
  return where + " has " + std::to_string(got) + (got == 1 ? " value" : " values") + ", expected " +
         std::to_string(expected) + " (as " + first + ")";
}

}  // namespace

CsvTable read_csv(const std::string& path, bool has_header) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) require_regular_file(path, "CSV");  // a FIFO would block, /dev/zero never end
  std::ifstream in(path);
  if (!in) throw DataError(path + ": cannot open for reading (" + std::strerror(errno) + ")");
  CsvTable table;
  std::vector<double> values;
  std::size_t cols = 0, rows = 0, first_row = 0, line_no = 0;
  std::string line;
  while (std::getline(in, line)) {
    ++line_no;
    // Spreadsheets save UTF-8 with a byte-order mark; it is not part of the first cell.
    if (line_no == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);
    if (trim(line).empty()) continue;  // blank lines carry no data
    const std::vector<std::string> cells = split(line, ',');
    const std::string row = path + ": row " + std::to_string(line_no);
    if (first_row == 0) {
      first_row = line_no;
      cols = cells.size();
    } else if (cells.size() != cols) {
      throw DataError(ragged(row, cells.size(), cols, "row " + std::to_string(first_row)));
    }
    if (has_header && table.header.empty()) {
      table.header = cells;
      continue;
    }
    for (std::size_t c = 0; c < cells.size(); ++c) {
      values.push_back(parse_cell(cells[c], row + ", column " + std::to_string(c + 1)));
    }
    ++rows;
  }
  if (in.bad()) throw DataError(path + ": read error after row " + std::to_string(line_no));
  if (rows == 0) {
    throw DataError(path + (table.header.empty() ? ": empty file (no rows)" : ": no data rows after the header"));
  }
  table.values = to_matrix(values, rows, cols);
  return table;
}

arma::mat parse_matrix(const std::string& text, const std::string& what) {
  std::vector<std::string> lines = split(text, ';');
  if (lines.size() > 1 && lines.back().empty()) lines.pop_back();  // a trailing ';'
  std::vector<double> values;
  std::size_t cols = 0;
  for (std::size_t r = 0; r < lines.size(); ++r) {
    const std::string row = what + ": row " + std::to_string(r + 1);
    if (lines[r].empty()) throw DataError(row + " is empty (rows are separated by ';', values by ',')");
    const std::vector<std::string> cells = split(lines[r], ',');
    if (r == 0) cols = cells.size();
    if (cells.size() != cols) throw DataError(ragged(row, cells.size(), cols, "row 1"));
    for (std::size_t c = 0; c < cells.size(); ++c) {
      values.push_back(parse_cell(cells[c], row + ", column " + std::to_string(c + 1)));
    }
  }
  return to_matrix(values, lines.size(), cols);
}

}  // namespace ag
