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

// The one grammar of a number typed by a person or written in a CSV cell,
// for the CLI and the live page alike: decimal notation only (strtod alone
// would also take "nan", "inf" and hex, and the page and the CLI would differ).
// `where()` names the cell ("FILE: row R, column C"); it is only built for a
// message, since a page's batch of 100,000 numbers would build as many strings.
template <class Where>
double parse_cell(const std::string& cell, const Where& where) {
  if (cell.empty()) throw DataError(where() + ": missing value (empty cell)");
  bool digit = false;
  for (char c : cell) {
    if (c >= '0' && c <= '9') {
      digit = true;
    } else if (std::strchr("+-.eE", c) == nullptr) {
      throw DataError(where() + ": " + quoted(cell) + " is not a number");
    }
  }
  if (!digit) throw DataError(where() + ": " + quoted(cell) + " is not a number");
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(cell.c_str(), &end);
  if (end != cell.c_str() + cell.size()) throw DataError(where() + ": " + quoted(cell) + " is not a number");
  if (!std::isfinite(v)) {
    throw DataError(where() + ": " + quoted(cell) + " is out of range for a double (the largest is about 1.8e308)");
  }
  return v;  // an underflow (1e-400) reads as the nearest double, (near) 0, as it does everywhere
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// One row of a literal: numbers separated by a comma and/or spaces. A comma
// with nothing before it is a missing value; one comma at the end is not
// (the page reads "3, 1," while it is being typed, and the CLI reads it alike).
std::vector<double> parse_row(const std::string& row, const std::string& where) {
  std::vector<double> values;
  std::size_t i = 0;
  bool comma = true;  // at the row's start, as after a comma: a number must come before the next comma
  for (;;) {
    while (i < row.size() && is_space(row[i])) ++i;
    if (i == row.size()) return values;
    const auto at = [&] { return where + ", column " + std::to_string(values.size() + 1); };
    if (row[i] == ',') {
      if (comma) throw DataError(at() + ": missing value (nothing between two commas, or before the first)");
      comma = true;
      ++i;
      continue;
    }
    const std::size_t start = i;
    while (i < row.size() && row[i] != ',' && !is_space(row[i])) ++i;
    values.push_back(parse_cell(row.substr(start, i - start), at));
    comma = false;
  }
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
      values.push_back(parse_cell(cells[c], [&] { return row + ", column " + std::to_string(c + 1); }));
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
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == ';' || text[i] == '\n') {
      lines.push_back(trim(text.substr(start, i - start)));
      start = i + 1;
    }
  }
  if (lines.size() == 1 && lines[0].empty()) {
    throw DataError(what + ": empty; give at least one row of numbers, e.g. 3, 1, 5, 7");
  }
  if (lines.size() > 1 && lines.back().empty()) lines.pop_back();  // one trailing ';' or newline
  std::vector<double> values;
  std::size_t cols = 0;
  for (std::size_t r = 0; r < lines.size(); ++r) {
    const std::string row = what + ": row " + std::to_string(r + 1);
    const std::vector<double> cells = parse_row(lines[r], row);
    if (cells.empty()) throw DataError(row + " is empty (rows are separated by ';', numbers by ',' or spaces)");
    if (r == 0) cols = cells.size();
    if (cells.size() != cols) throw DataError(ragged(row, cells.size(), cols, "row 1"));
    values.insert(values.end(), cells.begin(), cells.end());
  }
  return to_matrix(values, lines.size(), cols);
}

double parse_number(const std::string& text, const std::string& what) {
  return parse_cell(trim(text), [&] { return what; });
}

}  // namespace ag
