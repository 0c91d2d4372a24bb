// What `autograd layernorm` prints of its comparison: the three backwards side by side,
// the two tapes, the --output-file CSV and the second-order check (cli/cmd_layernorm.cpp
// parses, computes, and prints through these).
#pragma once

#include <armadillo>

#include <string>

#include "check/norm_compare.h"
#include "check/norm_second_order.h"

namespace cli::norm_report {

// v to `precision` significant digits.
std::string num(double v, int precision);

// Row r as "[a, b, c]"; a per-row statistic (one column) as a plain number.
std::string row_str(const arma::mat& m, arma::uword r, int precision);

// Every row of m on a line of its own, after `indent`.
std::string matrix_str(const arma::mat& m, int precision, const std::string& indent);

// dx, dgamma (and dbeta) by each path that ran, then their largest differences.
void print_comparison(const ag::NormComparison& c, bool rms, int precision);

// The composed and the fused tape, and the bytes each holds for backward.
void print_tapes(const ag::NormComparison& c, bool rms);

// The --output-file CSV: quantity,path,row,column,value, one value per line.
std::string output_csv(const ag::NormComparison& c, bool rms);

// The Hessian-vector products' agreement, and the transpose identity.
void print_second_order(const ag::NormHvp& h, bool rms);

}  // namespace cli::norm_report
