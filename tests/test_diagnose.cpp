// The diagnosis of a wrong gradient (check/diagnose.h): each kind of mistake
// a student's backward makes is named, from plain matrices and from a tape
// function through gradcheck.
#define BOOST_TEST_MODULE diagnose
#include <boost/test/unit_test.hpp>

#include "autograd/custom_op.h"
#include "check/diagnose.h"

#include <cmath>

using ag::Mistake;

BOOST_AUTO_TEST_CASE(each_kind_from_plain_matrices) {
  const arma::mat e = {{1, -2, 3}, {0.5, 4, -1}};
  const arma::mat sq = {{1, 2}, {3, 4}};
  BOOST_TEST(ag::diagnose_gradient(e, e).correct());
  BOOST_TEST(ag::diagnose_gradient(e * (1.0 / 3), e).factor_text == "1/3");
  BOOST_TEST((ag::diagnose_gradient(-e, e).kind == Mistake::WrongSign));
  BOOST_TEST((ag::diagnose_gradient(sq.t(), sq).kind == Mistake::Transposed));
  BOOST_TEST((ag::diagnose_gradient(e.t(), e).kind == Mistake::Transposed));
  BOOST_TEST((ag::diagnose_gradient(arma::zeros(2, 3), e).kind == Mistake::Zero));
  const ag::Diagnosis missing = ag::diagnose_gradient(e, arma::sum(e, 0));
  BOOST_TEST((missing.kind == Mistake::MissingBroadcastSum));
  BOOST_TEST(missing.broadcast_dim == 0);
  BOOST_TEST(ag::diagnose_gradient(e, arma::sum(e, 1)).broadcast_dim == 1);
  arma::mat partly = e;
  partly(1, 2) = 7;
  const ag::Diagnosis p = ag::diagnose_gradient(partly, e);
  BOOST_TEST((p.kind == Mistake::PartlyCorrect));
  BOOST_TEST(p.correct_elements == 5u);
  BOOST_TEST((ag::diagnose_gradient(arma::ones(4, 4), e).kind == Mistake::WrongShape));
  arma::mat nan = e;
  nan(0, 0) = arma::datum::nan;
  BOOST_TEST((ag::diagnose_gradient(nan, e).kind == Mistake::NotFinite));
}

BOOST_AUTO_TEST_CASE(diagnostic_gradcheck_on_a_tape_function) {
  // y = x^2 with a backward that forgot the 2.
  ag::TapeFunction f = [](ag::Tape&, const std::vector<ag::Var>& in) {
    const ag::Function half{"half_square", [](const ag::Inputs& x) { return arma::mat(arma::square(x[0])); },
                            [](const ag::Inputs& x, const arma::mat&, const arma::mat& dy) {
                              return ag::Grads{x[0] % dy};
                            }};
    return ag::apply(half, {in[0]});
  };
  const std::vector<ag::Diagnosis> d = ag::diagnose(f, {arma::mat{{0.5, -1.5, 2.0}}});
  BOOST_TEST_REQUIRE(d.size() == 1u);
  BOOST_TEST((d[0].kind == Mistake::ConstantFactor));
  BOOST_TEST(d[0].factor_text == "1/2");
}

BOOST_AUTO_TEST_CASE(a_factor_that_is_one_over_a_named_size_reads_as_a_mean) {
  const arma::mat e = {{1, -2, 3}, {0.5, 4, -1}};
  ag::DiagnoseOptions options;
  options.sizes = {{"N, the number of rows", 4}};
  const ag::Diagnosis d = ag::diagnose_gradient(e * 0.25, e, options);
  BOOST_TEST((d.kind == Mistake::ConstantFactor));
  BOOST_TEST(d.factor_text == "1/4");
  BOOST_TEST(d.hint.find("1/(N, the number of rows)") != std::string::npos, d.hint);
}

BOOST_AUTO_TEST_CASE(a_backward_refused_by_the_engine_is_a_wrong_shape) {
  // The gradient comes back transposed; the engine refuses it and the diagnosis keeps its message.
  ag::TapeFunction f = [](ag::Tape&, const std::vector<ag::Var>& in) {
    const ag::Function flipped{"flipped", [](const ag::Inputs& x) { return x[0]; },
                               [](const ag::Inputs&, const arma::mat&, const arma::mat& dy) {
                                 return ag::Grads{arma::mat(dy.t())};
                               }};
    return ag::apply(flipped, {in[0]});
  };
  const std::vector<ag::Diagnosis> d = ag::diagnose(f, {arma::mat(2, 3, arma::fill::ones)});
  BOOST_TEST_REQUIRE(d.size() == 1u);
  BOOST_TEST((d[0].kind == Mistake::WrongShape));
  BOOST_TEST(d[0].hint.find("flipped") != std::string::npos, d[0].hint);
}

BOOST_AUTO_TEST_CASE(fractions_are_printed_as_fractions) {
  BOOST_TEST(ag::fraction_text(1.0 / 3) == "1/3");
  BOOST_TEST(ag::fraction_text(-0.5) == "-1/2");
  BOOST_TEST(ag::fraction_text(2.0) == "2");
}

// Answers near the largest double: the fitted factor is computed without
// overflow, and a ratio past the largest double is not reported as a factor.
BOOST_AUTO_TEST_CASE(a_factor_near_the_largest_double_is_finite_or_not_claimed) {
  const arma::mat e = {{1, -2, 3}, {0.5, 4, -1}};
  const ag::Diagnosis big = ag::diagnose_gradient(1e307 * e, e);  // sum(yours % e) overflows
  BOOST_TEST((big.kind == Mistake::ConstantFactor));
  BOOST_TEST(big.factor == 1e307, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(big.hint.find("1e+307 x expected") != std::string::npos, big.hint);
  const ag::Diagnosis huge = ag::diagnose_gradient(2.5e307 * e, 1e-3 * e);  // 2.5e310 x
  BOOST_TEST(std::isfinite(huge.factor));
  BOOST_TEST((huge.kind != Mistake::ConstantFactor));
  BOOST_TEST(huge.hint.find("too large") != std::string::npos, huge.hint);
  for (const ag::Diagnosis* d : {&big, &huge}) {
    BOOST_TEST(d->hint.find("inf") == std::string::npos, d->hint);
    BOOST_TEST(d->hint.find("nan") == std::string::npos, d->hint);
  }
  BOOST_TEST(ag::fraction_text(1e308) == "1e+308");
  BOOST_TEST(ag::fraction_text(-3e20) == "-3e+20");
}

// The feedback file shows a student the numbers where their gradient is furthest off.
BOOST_AUTO_TEST_CASE(the_worst_element_is_named_with_both_numbers) {
  const arma::mat e = {{1, -2, 3}, {0.5, 4, -1}};
  arma::mat yours = e;
  yours(1, 2) = 7;
  yours(0, 1) = -2.5;
  const ag::Diagnosis d = ag::diagnose_gradient(yours, e);
  BOOST_TEST(d.elementwise);
  BOOST_TEST(d.worst_row == 1u);
  BOOST_TEST(d.worst_col == 2u);
  BOOST_TEST(d.worst_yours == 7);
  BOOST_TEST(d.worst_expected == -1);
  yours(0, 0) = arma::datum::nan;  // a NaN is further off than any number
  const ag::Diagnosis n = ag::diagnose_gradient(yours, e);
  BOOST_TEST(n.worst_row == 0u);
  BOOST_TEST(n.worst_col == 0u);
  BOOST_TEST(std::isnan(n.worst_yours));
  BOOST_TEST(!ag::diagnose_gradient(arma::mat(3, 1, arma::fill::ones), e).elementwise);  // shapes differ
}
