#include "nn/embedding.h"

#include <cmath>

#include "ops/indexing.h"

namespace ag {

namespace {
// Checked before the table is drawn: a NaN sd would silently fill it with NaN.
double checked_sd(const std::string& name, arma::uword count, arma::uword width, double sd) {
  if (count == 0 || width == 0) {
    throw Error("Embedding '" + name + "': needs at least one row and one column, got " + shape_str(count, width));
  }
  if (!(std::isfinite(sd) && sd >= 0)) {
    throw Error("Embedding '" + name + "': the initial standard deviation sd must be a finite number, 0 or more, got " +
                std::to_string(sd));
  }
  return sd;
}
}  // namespace

Embedding::Embedding(const std::string& name, arma::uword count, arma::uword width, Rng& rng, double sd)
    : table(name + ".weight", rng.normal(count, width, checked_sd(name, count, width, sd))) {}

Var Embedding::lookup(Tape& tape, const arma::uvec& ids) { return embedding(tape.param(table), ids); }

Var Embedding::forward(Var x) {
  const arma::mat& v = x.value();
  if (v.n_cols != 1 && !v.is_empty()) {
    throw Error("Embedding '" + table.name() + "': expected a column of ids (N x 1), got " + x.shape());
  }
  arma::uvec ids(v.n_rows);
  for (arma::uword i = 0; i < v.n_rows; ++i) {
    if (!(v(i) >= 0) || v(i) != std::floor(v(i)) || v(i) >= static_cast<double>(table.value().n_rows)) {
      throw Error("Embedding '" + table.name() + "': row " + std::to_string(i) + " holds " + std::to_string(v(i)) +
                  ", not an id from 0 to " + std::to_string(table.value().n_rows - 1));
    }
    ids(i) = static_cast<arma::uword>(v(i));
  }
  return lookup(tape_of("Embedding", x), ids);
}

std::string Embedding::describe() const {
  return "Embedding(" + std::to_string(table.value().n_rows) + ", " + std::to_string(table.value().n_cols) + ")";
}

}  // namespace ag
