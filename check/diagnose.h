// A diagnostic gradient check: when an analytic gradient disagrees with the
// expected one (from finite differences), say what kind of wrong it looks like.
//
// The kinds are the mistakes students make in a handwritten backward:
//   constant factor  yours = c x expected (c = 2, 1/2, 1/N ...: a term counted
//                    twice, a mean where a sum belongs)
//   wrong sign       yours = -expected
//   transposed       yours = expected^T (a product in the wrong order, a missing .t())
//   missing sum      yours is N x D for a 1 x D (or N x 1, 1 x 1) input, and summing
//                    it over the broadcast dimension gives the right answer
//   zero             yours is all zeros (an unfinished TODO)
//   partly correct   right on some elements only (an off-by-one loop, one term missing
//                    on some rows)
// and, when nothing fits: wrong shape, not finite, or no simple pattern.
#pragma once

#include <armadillo>

#include <string>
#include <utility>
#include <vector>

#include "autograd/gradcheck.h"

namespace ag {

enum class Mistake {
  None,            // correct
  ConstantFactor,
  WrongSign,
  Transposed,
  MissingBroadcastSum,
  Zero,
  PartlyCorrect,
  WrongShape,
  NotFinite,
  Unrecognised
};

// "correct", "constant factor", "wrong sign", ...
const char* mistake_name(Mistake m);

struct Diagnosis {
  Mistake kind = Mistake::None;
  double factor = 1;             // ConstantFactor / WrongSign: yours = factor x expected
  std::string factor_text;       // "2", "1/4", "-1"
  int broadcast_dim = -1;        // MissingBroadcastSum: 0 = summed down the rows, 1 = across the columns, 2 = both
  arma::uword correct_elements = 0, total_elements = 0;
  double max_abs_error = 0;      // when the shapes match
  // When the shapes match: the element where yours is furthest from the expected one (a NaN
  // or inf counts as furthest), the numbers a student compares first.
  bool elementwise = false;
  arma::uword worst_row = 0, worst_col = 0;
  double worst_yours = 0, worst_expected = 0;
  std::string hint;              // one or two sentences for the student
  bool correct() const { return kind == Mistake::None; }
};

struct DiagnoseOptions {
  double atol = kDefaultAtol;  // autograd/gradcheck.h: the one default
  double rtol = kDefaultRtol;
  // Sizes worth naming in a hint about a factor, e.g. {"N, the number of rows", 4}:
  // a factor 1/4 then reads "1/N".
  std::vector<std::pair<std::string, double>> sizes;
};

// Compares `yours` with `expected`; both may have any shape.
Diagnosis diagnose_gradient(const arma::mat& yours, const arma::mat& expected,
                            const DiagnoseOptions& options = {});

// gradcheck, then a diagnosis of each input's gradient. A backward that throws
// (for example a gradient of the wrong shape, refused by the engine) gives
// WrongShape with the engine's message as the hint.
std::vector<Diagnosis> diagnose(const TapeFunction& f, const std::vector<arma::mat>& inputs,
                                const GradcheckOptions& gradcheck_options = {},
                                const DiagnoseOptions& options = {});

// "1/3", "2", "-1/2" for a number close to a small fraction; else "%.4g".
std::string fraction_text(double x);

}  // namespace ag
