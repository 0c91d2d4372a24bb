// Issue 37: a correct derivation computed in float scored 0 and was told it used finite
// differences and should derive the result. Its numbers are all floats, which finite
// differences in double never are: it is now told that float's precision is the problem.
#define BOOST_TEST_MODULE assignments_float
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "assignments/kit/grader.h"

namespace {

using Mats = std::vector<arma::mat>;

kit::Exercise exercise(const std::string& name) { return kit::load_exercise(AUTOGRAD_SOURCE_DIR "/assignments", name); }

// The right softmax backward, every step in float.
Mats softmax_in_float(const Mats& sent) {  // y, dy
  const arma::fmat y = arma::conv_to<arma::fmat>::from(sent[0]), dy = arma::conv_to<arma::fmat>::from(sent[1]);
  const arma::fvec s = arma::sum(dy % y, 1);
  const arma::fmat dx = y % (dy.each_col() - s);
  return {arma::conv_to<arma::mat>::from(dx)};
}

// The right LayerNorm backward (the three-term formula), every step in float.
Mats layernorm_in_float(const Mats& sent) {  // x, gamma, dy, eps
  const arma::fmat x = arma::conv_to<arma::fmat>::from(sent[0]), gamma = arma::conv_to<arma::fmat>::from(sent[1]);
  const arma::fmat dy = arma::conv_to<arma::fmat>::from(sent[2]);
  const float eps = float(sent[3](0));
  const arma::fmat centred = x.each_col() - arma::mean(x, 1);
  const arma::fvec rstd = 1.0f / arma::sqrt(arma::mean(arma::square(centred), 1) + eps);
  const arma::fmat xhat = centred.each_col() % rstd;
  arma::fmat dxhat = dy;
  dxhat.each_row() %= gamma;
  arma::fmat dx = dxhat.each_col() - arma::mean(dxhat, 1);
  dx -= xhat.each_col() % arma::mean(dxhat % xhat, 1);
  dx.each_col() %= rstd;
  return {arma::conv_to<arma::mat>::from(dx), arma::conv_to<arma::mat>::from(arma::fmat(arma::sum(dy % xhat, 0))),
          arma::conv_to<arma::mat>::from(arma::fmat(arma::sum(dy, 0)))};
}

// Every row that lost its points blames float's precision, and none says finite differences.
void expect_told_precision(const kit::GradeReport& r) {
  int lost = 0;
  for (const kit::GradeRow& row : r.rows) {
    if (row.points == row.max_points && row.diagnosis.correct()) continue;
    ++lost;
    const std::string hint = row.note.empty() ? row.diagnosis.hint : row.note;
    BOOST_TEST(row.result == "single precision", row.check << " " << row.gradient << ": " << row.result);
    BOOST_TEST(hint.find("precision of float") != std::string::npos, hint);
    BOOST_TEST(hint.find("finite differences") == std::string::npos, hint);
  }
  BOOST_TEST(lost > 0);  // float is not exact enough to pass: the grader wants 1e-13
}

}  // namespace

BOOST_AUTO_TEST_CASE(softmax_computed_in_float_is_told_its_precision_is_the_problem) {
  for (unsigned seed : {1u, 2u, 3u}) expect_told_precision(kit::grade_in_process(exercise("softmax"), softmax_in_float, seed));
}

BOOST_AUTO_TEST_CASE(layernorm_computed_in_float_is_told_its_precision_is_the_problem) {
  for (unsigned seed : {1u, 2u, 3u}) {
    expect_told_precision(kit::grade_in_process(exercise("layernorm"), layernorm_in_float, seed));
  }
}

BOOST_AUTO_TEST_CASE(only_floats_are_taken_for_floats) {
  BOOST_TEST(kit::computed_in_float(arma::mat{{0.5, 0.25, -3.0}}));
  BOOST_TEST(!kit::computed_in_float(arma::mat{{0.5, 0.1}}));  // 0.1 is no float
  BOOST_TEST(!kit::computed_in_float(arma::mat(2, 2, arma::fill::zeros)));
}
