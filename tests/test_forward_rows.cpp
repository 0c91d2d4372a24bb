// Forward mode and second order on every row of the op table and every
// composite (check/op_table.h), as whole functions: the transpose identity to
// 1e-12, the JVP against finite differences, the HVP against finite
// differences of the gradient, and the Hessian's symmetry.
#define BOOST_TEST_MODULE forward_rows
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <string>

#include "check/forward_check.h"
#include "check/op_table.h"
#include "ops/functional.h"

using namespace ag;
namespace bdata = boost::unit_test::data;

namespace {
std::vector<std::string> row_names() {
  std::vector<std::string> names;
  for (const OpRow* row : all_rows()) names.push_back(row->name);
  return names;
}
}  // namespace

BOOST_DATA_TEST_CASE(every_row_passes_forward_and_second_order, bdata::make(row_names()) * bdata::make({0, 1}),
                     name, seed) {
  const OpRow& row = row_named(name);
  const std::vector<std::string> all = row_names();
  const auto position = std::find(all.begin(), all.end(), name) - all.begin();
  Rng rng(derive_seed(2000 + seed, std::uint64_t(position)));
  GradcheckOptions options;
  options.seed = static_cast<unsigned>(seed);
  for (const GradcheckCase& c : row.cases) {
    const ForwardCheck r = check_forward(tape_function(row), make_inputs(row, c, rng), 2, options);
    BOOST_TEST(r.passed, case_name(row, c) << ":\n" << r.summary());
    BOOST_TEST(r.transpose.rel_error <= 1e-12, case_name(row, c) << ": " << r.transpose.rel_error);
  }
}

// Forward and reverse Jacobians of every row agree to rounding.
BOOST_DATA_TEST_CASE(every_row_has_one_jacobian_both_ways, bdata::make(row_names()), name) {
  const OpRow& row = row_named(name);
  Rng rng(7);
  const std::vector<arma::mat> x = make_inputs(row, row.cases.at(0), rng);
  const Jacobian fwd = jacobian(tape_function(row), x, Mode::Forward);
  const Jacobian rev = jacobian(tape_function(row), x, Mode::Reverse);
  BOOST_TEST(fwd.passes == element_count(x));
  BOOST_TEST(fwd.matrix.n_rows == rev.passes);
  const double scale = std::max(1.0, arma::abs(rev.matrix).max());
  BOOST_TEST(arma::abs(fwd.matrix - rev.matrix).max() <= 1e-12 * scale, name);
}
