// Reading numeric CSV files: every value a double, errors naming the file,
// the row and the column of the bad cell. Nothing is returned half-read.
#pragma once

#include <armadillo>

#include "autograd/error.h"  // DataError

#include <string>
#include <vector>

namespace ag {

struct CsvTable {
  std::vector<std::string> header;  // empty when the file has no header row
  arma::mat values;                 // one CSV row per matrix row
};

// Throws DataError: "FILE: row R, column C: 'abc' is not a number" (1-based,
// counting the header as row 1), ragged rows, empty files, unreadable files.
CsvTable read_csv(const std::string& path, bool has_header);

// A matrix literal such as "1.133,-0.299,0.503; -0.176,0.911,0.143"
// (rows separated by ';'). Throws DataError naming `what` and the bad cell.
arma::mat parse_matrix(const std::string& text, const std::string& what);

}  // namespace ag
