// The op table: every differentiable op with its forward and backward formula
// and a gradient-check case (input shapes and domains). Like PyTorch's
// derivatives.yaml, one row per op; the tests and `autograd gradcheck` run
// gradcheck on every row, so an op without a row is visible.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "autograd/gradcheck.h"

namespace ag {

// Where an input's random values are drawn, so each op stays inside its domain.
enum class Domain {
  Any,          // uniform in [-2, 2]
  Positive,     // uniform in [0.5, 2]    (log, sqrt, pow)
  AwayFromZero  // |x| in [0.5, 2]        (divisors, relu's kink)
};

struct InputSpec {
  arma::uword rows, cols;
  Domain domain = Domain::Any;
};

struct OpCase {
  std::string name;      // "mul (row broadcast)"
  std::string forward;   // "y = a * b"
  std::string backward;  // "da = dy * b, db = dy * a"
  std::vector<InputSpec> inputs;
  TapeFunction f;
};

const std::vector<OpCase>& op_table();

// Random inputs for one case, reproducible from the seed.
std::vector<arma::mat> make_inputs(const OpCase& op, std::mt19937_64& rng);

// "3x4, 1x4"
std::string shapes_str(const std::vector<InputSpec>& inputs);

}  // namespace ag
