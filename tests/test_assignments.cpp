// The assignment kit: the grader gives full marks to each reference solution
// and catches each planted mistake with the right diagnosis; the custom-op API
// students write their backward with. (The diagnosis and the per-node check
// have their own tests: test_diagnose.cpp, test_node_check.cpp.)
#define BOOST_TEST_MODULE assignments
#include <boost/test/unit_test.hpp>

#include <sstream>

#include "assignments/kit/exercises.h"
#include "check/diagnose.h"
#include "ops/ops.h"

// The reference solutions, compiled from assignments/solutions/ under other names.
#define softmax_backward softmax_backward_ref
#define layernorm_backward layernorm_backward_ref
#define rmsnorm_backward rmsnorm_backward_ref
#define linear_backward linear_backward_ref
#include "../assignments/solutions/layernorm.cpp"
#include "../assignments/solutions/matmul_bias.cpp"
#include "../assignments/solutions/rmsnorm.cpp"
#include "../assignments/solutions/softmax.cpp"
#undef softmax_backward
#undef layernorm_backward
#undef rmsnorm_backward
#undef linear_backward

using ag::Mistake;

namespace {

std::string table(const kit::GradeReport& r) {
  std::ostringstream os;
  r.print(os);
  return os.str();
}

// A planted mistake must lose marks and be named with the expected kind and hint.
void expect_caught(const kit::GradeReport& r, Mistake kind, const std::string& hint_part) {
  const std::string t = table(r);
  BOOST_TEST_MESSAGE(t);
  BOOST_TEST(r.percent() < 100);
  BOOST_TEST(r.found(kind), "expected a '" << ag::mistake_name(kind) << "' diagnosis in\n" << t);
  BOOST_TEST(t.find(hint_part) != std::string::npos, "expected the hint '" << hint_part << "' in\n" << t);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(reference_solutions)

BOOST_AUTO_TEST_CASE(every_reference_solution_gets_full_marks) {
  for (const kit::GradeReport& r :
       {kit::grade_softmax(softmax_backward_ref), kit::grade_layernorm(layernorm_backward_ref),
        kit::grade_rmsnorm(rmsnorm_backward_ref), kit::grade_matmul_bias(linear_backward_ref)}) {
    BOOST_TEST(r.score() == r.max_score(), table(r));
    BOOST_TEST(r.percent() == 100);
    BOOST_TEST(r.max_score() >= 5);
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(planted_mistakes)

BOOST_AUTO_TEST_CASE(softmax_twice_the_gradient_is_a_factor_2) {
  expect_caught(kit::grade_softmax([](const arma::mat& y, const arma::mat& dy) {
                  return arma::mat(2 * softmax_backward_ref(y, dy));
                }),
                Mistake::ConstantFactor, "yours = 2 x expected");
}

BOOST_AUTO_TEST_CASE(softmax_flipped_sign) {
  expect_caught(kit::grade_softmax([](const arma::mat& y, const arma::mat& dy) {
                  const arma::vec s = arma::sum(dy % y, 1);
                  arma::mat dx = y % (dy.each_col() - s);
                  return arma::mat(-dx);  // wrote (s - dy) instead of (dy - s)
                }),
                Mistake::WrongSign, "wrong sign");
}

BOOST_AUTO_TEST_CASE(softmax_unfinished_stub_is_zero) {
  const kit::GradeReport r = kit::grade_softmax(
      [](const arma::mat& y, const arma::mat&) { return arma::mat(arma::size(y), arma::fill::zeros); });
  expect_caught(r, Mistake::Zero, "all zeros");
  BOOST_TEST(r.score() == 0);
}

BOOST_AUTO_TEST_CASE(layernorm_mean_instead_of_sum_is_a_factor_1_over_N) {
  expect_caught(kit::grade_layernorm([](const arma::mat& x, const arma::mat& g, const arma::mat& dy, double eps) {
                  LayerNormGrads r = layernorm_backward_ref(x, g, dy, eps);
                  r.dbeta = arma::mean(dy, 0);
                  return r;
                }),
                Mistake::ConstantFactor, "1/(N, the number of rows of x)");
}

BOOST_AUTO_TEST_CASE(layernorm_dbeta_without_the_broadcast_sum) {
  expect_caught(kit::grade_layernorm([](const arma::mat& x, const arma::mat& g, const arma::mat& dy, double eps) {
                  LayerNormGrads r = layernorm_backward_ref(x, g, dy, eps);
                  r.dbeta = dy;  // N x D: forgot to sum over the rows beta was broadcast to
                  return r;
                }),
                Mistake::MissingBroadcastSum, "summing yours down the rows");
}

BOOST_AUTO_TEST_CASE(layernorm_off_by_one_row_loop_is_partly_correct) {
  expect_caught(kit::grade_layernorm([](const arma::mat& x, const arma::mat& g, const arma::mat& dy, double eps) {
                  LayerNormGrads r = layernorm_backward_ref(x, g, dy, eps);
                  r.dx.row(r.dx.n_rows - 1).zeros();  // the loop stopped one row early
                  return r;
                }),
                Mistake::PartlyCorrect, "only");
}

BOOST_AUTO_TEST_CASE(matmul_dW_transposed) {
  const kit::GradeReport r =
      kit::grade_matmul_bias([](const arma::mat& X, const arma::mat& W, const arma::mat& dY) {
        LinearGrads g = linear_backward_ref(X, W, dY);
        g.dW = dY.t() * X;  // M x K: the product in the wrong order
        return g;
      });
  expect_caught(r, Mistake::Transposed, "transpose");
  // Both the shape-changing case and the square case (same shape, values transposed) are named.
  int transposed_rows = 0;
  for (const kit::GradeRow& row : r.rows) transposed_rows += row.diagnosis.kind == Mistake::Transposed;
  BOOST_TEST(transposed_rows >= 3);
}

BOOST_AUTO_TEST_CASE(matmul_db_without_the_broadcast_sum) {
  expect_caught(kit::grade_matmul_bias([](const arma::mat& X, const arma::mat& W, const arma::mat& dY) {
                  LinearGrads g = linear_backward_ref(X, W, dY);
                  g.db = dY;
                  return g;
                }),
                Mistake::MissingBroadcastSum, "broadcast");
}

BOOST_AUTO_TEST_CASE(rmsnorm_missing_term_is_named_and_the_tape_check_names_the_node) {
  const kit::GradeReport r =
      kit::grade_rmsnorm([](const arma::mat& x, const arma::mat& g, const arma::mat& dy, double eps) {
        RMSNormGrads out = rmsnorm_backward_ref(x, g, dy, eps);
        const arma::vec rrms = 1.0 / arma::sqrt(arma::mean(arma::square(x), 1) + eps);
        arma::mat dxhat = dy;
        dxhat.each_row() %= g;
        out.dx = dxhat.each_col() % rrms;  // dropped the second term
        return out;
      });
  const std::string t = table(r);
  BOOST_TEST(r.percent() < 100);
  BOOST_TEST(t.find("first wrong node on the tape: 3 'rmsnorm (yours)'") != std::string::npos, t);
}

BOOST_AUTO_TEST_CASE(a_backward_that_throws_scores_without_crashing) {
  const kit::GradeReport r = kit::grade_softmax([](const arma::mat& y, const arma::mat&) -> arma::mat {
    return y.col(y.n_cols + 3);  // out of bounds: Armadillo throws
  });
  BOOST_TEST(r.score() == 0);
  BOOST_TEST(table(r).find("your backward threw") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
