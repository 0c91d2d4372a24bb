// Issue 37: five different softmax mistakes, made by 7 of 15 students, all got "Wrong
// everywhere with no simple pattern". Each typical mistake now gets its own label (the
// result column, the CSV's mistakes) and a hint that says what to change.
#define BOOST_TEST_MODULE assignments_softmax
#include <boost/test/unit_test.hpp>

#include <functional>
#include <string>
#include <vector>

#include "assignments/kit/grader.h"

namespace {

using Mats = std::vector<arma::mat>;

struct Mistake {
  std::string label, hint;  // the result every scored row must show, and a part of its hint
  std::function<arma::mat(const arma::mat& y, const arma::mat& dy)> dx;
};

const std::vector<Mistake>& zoo() {
  static const std::vector<Mistake> mistakes = {
      {"missing sum term", "is missing", [](const arma::mat& y, const arma::mat& dy) { return arma::mat(y % dy); }},
      {"diagonal only", "off-diagonal",
       [](const arma::mat& y, const arma::mat& dy) { return arma::mat(y % (1 - y) % dy); }},
      {"wrong sign, sum term", "wrong sign",
       [](const arma::mat& y, const arma::mat& dy) { return arma::mat(y % (dy.each_col() + arma::sum(dy % y, 1))); }},
      {"sum without y", "leaves y out",
       [](const arma::mat& y, const arma::mat& dy) { return arma::mat(y % (dy.each_col() - arma::sum(dy, 1))); }},
      {"log-softmax backward", "log_softmax",
       [](const arma::mat& y, const arma::mat& dy) { return arma::mat(dy - y.each_col() % arma::sum(dy, 1)); }},
      {"sum down the columns", "down the columns",
       [](const arma::mat& y, const arma::mat& dy) { return arma::mat(y % (dy.each_row() - arma::sum(dy % y, 0))); }},
      {"sum over the batch", "whole batch",
       [](const arma::mat& y, const arma::mat& dy) { return arma::mat(y % (dy - arma::accu(dy % y))); }},
  };
  return mistakes;
}

kit::GradeReport graded(const Mistake& m, unsigned seed) {
  const kit::Exercise ex = kit::load_exercise(AUTOGRAD_SOURCE_DIR "/assignments", "softmax");
  return kit::grade_in_process(ex, [&](const Mats& sent) { return Mats{m.dx(sent[0], sent[1])}; }, seed);
}

}  // namespace

BOOST_AUTO_TEST_CASE(each_softmax_mistake_gets_its_own_label_and_hint) {
  for (const Mistake& m : zoo()) {
    for (unsigned seed : {1u, 2u, 3u}) {
      const kit::GradeReport r = graded(m, seed);
      BOOST_TEST(r.score() < r.max_score(), m.label);
      // The random 3x5 row: several rows and columns, where no two mistakes agree.
      const kit::GradeRow& row = r.rows.at(0);
      BOOST_TEST(row.check == "random 3x5");
      BOOST_TEST(row.result == m.label, m.label << " got '" << row.result << "'");
      BOOST_TEST(row.diagnosis.hint.find(m.hint) != std::string::npos, m.label << ": " << row.diagnosis.hint);
      const kit::GradeRow& tape = r.rows.back();  // the same dx used on a tape is named the same
      BOOST_TEST(tape.result == m.label, m.label << " on the tape got '" << tape.result << "'");
    }
  }
}

BOOST_AUTO_TEST_CASE(the_right_softmax_backward_is_not_named) {
  const Mistake right{"", "", [](const arma::mat& y, const arma::mat& dy) {
                        return arma::mat(y % (dy.each_col() - arma::sum(dy % y, 1)));
                      }};
  const kit::GradeReport r = graded(right, 1);
  BOOST_TEST(r.score() == r.max_score());
}
