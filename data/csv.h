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

// A matrix literal such as "1.133,-0.299,0.503; -0.176,0.911,0.143": the one
// grammar of `autograd layernorm --input` and the live page's x (page/request.cpp).
// Numbers are decimal (no hex, nan or inf), separated by a comma and/or spaces;
// rows by ';' or a newline. One trailing separator (a row's last ',' or the
// last ';') is allowed, as typed text ends while it is being typed; an empty
// item between two commas or an empty row is not. Throws DataError naming
// `what`, the row and the column: "--input: row 1, column 2: 'a' is not a number".
arma::mat parse_matrix(const std::string& text, const std::string& what);

// One number of the same grammar, spaces around it allowed ("eps: '0x1' is not a number").
double parse_number(const std::string& text, const std::string& what);

}  // namespace ag
