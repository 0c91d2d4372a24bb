// The op table's domains (check/op_table.h): drawing values inside a domain,
// and whether values the fuzzer already has qualify.
#include "check/op_table.h"

#include <algorithm>
#include <cmath>

namespace ag {

namespace {

template <class Pred>
bool all_of(const arma::mat& x, Pred ok) {
  return std::all_of(x.begin(), x.end(), ok);  // true for an empty x
}

arma::uword count_along(const arma::mat& x, int dim) { return dim == 0 ? x.n_rows : x.n_cols; }

// The two largest values along dim differ by at least `gap` (a tie has no derivative).
bool max_has_gap(const arma::mat& x, int dim, double gap) {
  if (count_along(x, dim) < 2) return true;
  const arma::mat sorted = arma::sort(x, "descend", dim);
  const arma::mat top = dim == 0 ? arma::mat(sorted.row(0) - sorted.row(1)) : arma::mat(sorted.col(0) - sorted.col(1));
  return all_of(top, [gap](double v) { return v >= gap; });
}

}  // namespace

arma::mat draw(Domain domain, Shape shape, Rng& rng) {
  arma::mat m(shape.rows, shape.cols);
  for (double& v : m) {
    switch (domain) {
      case Domain::Positive:
      case Domain::PowerBase: v = rng.uniform(0.5, 2.0); break;
      case Domain::AwayFromZero:
      case Domain::Kink: v = rng.uniform(0.5, 2.0) * (rng.uniform() < 0.5 ? -1.0 : 1.0); break;
      case Domain::Any:
      case Domain::ExpInput:
      case Domain::MaxGap:
      case Domain::TwoAlong:
      case Domain::Spread:
      case Domain::Scale: v = rng.uniform(-2.0, 2.0); break;  // inside these (ties and tiny spreads aside)
    }
  }
  return m;
}

std::vector<arma::mat> make_inputs(const OpRow& row, const GradcheckCase& c, Rng& rng) {
  std::vector<arma::mat> inputs;
  for (std::size_t k = 0; k < row.inputs.size(); ++k) inputs.push_back(draw(row.inputs[k], c.shapes.at(k), rng));
  return inputs;
}

bool accepts(const OpRow& row, std::size_t k, const arma::mat& x, const std::vector<double>& constants) {
  const int d = row.dim;
  switch (row.inputs.at(k)) {
    case Domain::Any: return true;
    case Domain::Positive: return all_of(x, [](double v) { return v >= 0.25; });
    case Domain::PowerBase: {
      // Whole powers are defined everywhere; fractional and negative ones need x > 0.
      const double p = constants.at(0);
      return (p > 0 && p == std::round(p)) || all_of(x, [](double v) { return v >= 0.25; });
    }
    case Domain::AwayFromZero: return all_of(x, [](double v) { return std::abs(v) >= 0.3; });
    case Domain::Kink: return all_of(x, [](double v) { return std::abs(v) >= 0.01; });
    case Domain::ExpInput: return all_of(x, [](double v) { return v <= 4.6; });
    case Domain::MaxGap: return max_has_gap(x, d, 0.01);
    case Domain::TwoAlong: return count_along(x, d) >= 2;
    case Domain::Spread:
      return count_along(x, d) >= 2 && all_of(arma::var(x, 1, d), [](double v) { return v >= 0.01; });
    case Domain::Scale:
      return count_along(x, d) >= 1 && all_of(arma::mean(arma::square(x), d), [](double v) { return v >= 0.01; });
  }
  return false;
}

}  // namespace ag
