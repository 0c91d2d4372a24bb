#include "data/datasets.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "autograd/format.h"
#include "autograd/tape.h"
#include "data/csv.h"

namespace ag {

arma::uvec Dataset::labels() const { return arma::conv_to<arma::uvec>::from(y.col(0)); }

arma::uvec Dataset::labels(const arma::uvec& rows) const {
  return arma::conv_to<arma::uvec>::from(y.submat(rows, arma::uvec{0}));
}

namespace {

// The label column's index: a header name, a 1-based number, or the last column.
arma::uword find_label_column(const std::string& path, const CsvTable& table, const std::string& label) {
  const arma::uword n_cols = table.values.n_cols;
  if (label.empty()) return n_cols - 1;
  for (arma::uword c = 0; c < table.header.size(); ++c) {
    if (table.header[c] == label) return c;
  }
  if (label.find_first_not_of("0123456789") == std::string::npos && label.size() < 10) {
    const unsigned long number = std::stoul(label);
    if (number >= 1 && number <= n_cols) return number - 1;
  }
  std::string names;
  for (const std::string& h : table.header) names += (names.empty() ? "" : ", ") + h;
  throw DataError(path + ": no label column '" + label + "' (the header has: " + names +
                  "; or give a column number 1.." + std::to_string(n_cols) + ")");
}

bool is_whole(double v) { return v >= 0 && v == std::floor(v); }

// Whole-number labels name classes, so the largest one sets the size of the
// output layer: a stray 999999 must not build a million-way classifier, and a
// large whole number must not quietly turn the task into regression.
void check_class_labels(const std::string& path, const arma::vec& y) {
  const arma::uword row = y.index_max();
  if (y(row) < static_cast<double>(kMaxClasses)) return;
  throw DataError(path + ": label " + exact_number(y(row)) + " (row " + std::to_string(row + 2) + ")" +
                  ": class labels must be whole numbers 0.." + std::to_string(kMaxClasses - 1) + " (at most " +
                  std::to_string(kMaxClasses) + " classes); to fit the labels by regression instead, scale the column so that some value " +
                  "is not a whole number");
}

}  // namespace

Dataset load_csv_dataset(const std::string& path, const std::string& label_column) {
  const CsvTable table = read_csv(path, true);
  if (table.values.n_rows == 0) throw DataError(path + ": the file has a header but no data rows");
  if (table.values.n_cols < 2) {
    throw DataError(path + ": needs a label column and at least one feature column, found " +
                    std::to_string(table.values.n_cols) + " column");
  }
  const arma::uword label = find_label_column(path, table, label_column);
  Dataset d;
  d.name = path;
  d.y = table.values.col(label);
  d.x = table.values;
  d.x.shed_col(label);
  const bool integer_labels = d.y.is_finite() && std::all_of(d.y.begin(), d.y.end(), is_whole);
  if (integer_labels) check_class_labels(path, d.y.col(0));
  d.task = integer_labels ? Task::Classification : Task::Regression;
  d.classes = integer_labels ? static_cast<arma::uword>(d.y.max()) + 1 : 0;
  return d;
}

Dataset subset(const Dataset& data, const arma::uvec& rows) {
  Dataset s;
  s.name = data.name;
  s.x = data.x.rows(rows);
  s.y = data.y.rows(rows);
  s.task = data.task;
  s.classes = data.classes;
  return s;
}

Split train_validation_split(const Dataset& data, double validation_fraction, Rng& rng) {
  if (!(validation_fraction >= 0.0 && validation_fraction < 1.0)) {
    throw Error("train_validation_split: the fraction must be in [0, 1), got " +
                std::to_string(validation_fraction));
  }
  const arma::uword n = data.size();
  arma::uword n_val = static_cast<arma::uword>(std::llround(validation_fraction * static_cast<double>(n)));
  if (validation_fraction > 0 && n >= 2) n_val = std::min(std::max<arma::uword>(n_val, 1), n - 1);
  const arma::uvec order = rng.permutation(n);
  Split split;
  split.validation = subset(data, order.head(n_val));
  split.train = subset(data, order.tail(n - n_val));
  return split;
}

std::vector<arma::uvec> shuffled_batches(arma::uword n, arma::uword batch_size, Rng& rng) {
  if (batch_size == 0) throw Error("shuffled_batches: the batch size must be positive");
  const arma::uvec order = rng.permutation(n);
  std::vector<arma::uvec> batches;
  for (arma::uword start = 0; start < n; start += batch_size) {
    batches.push_back(order.subvec(start, std::min(start + batch_size, n) - 1));
  }
  return batches;
}

}  // namespace ag
