// The assignment kit: the grader gives full marks to each reference solution,
// catches each planted mistake with the right diagnosis, and the diagnostic
// gradcheck, the custom-op API and the per-node check work on their own.
#define BOOST_TEST_MODULE assignments
#include <boost/test/unit_test.hpp>

#include <sstream>

#include "assignments/kit/exercises.h"
#include "autograd/custom_op.h"
#include "check/node_check.h"
#include "ops/layernorm.h"
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

BOOST_AUTO_TEST_SUITE(diagnose)

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

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(custom_op_and_node_check)

BOOST_AUTO_TEST_CASE(a_custom_op_is_used_like_a_builtin) {
  const ag::Function cube{"cube", [](const ag::Inputs& x) { return arma::mat(arma::pow(x[0], 3)); },
                          [](const ag::Inputs& x, const arma::mat&, const arma::mat& dy) {
                            return ag::Grads{3 * arma::square(x[0]) % dy};
                          }};
  ag::Tape tape;
  ag::Var x = tape.leaf(arma::mat{{1.0, 2.0}});
  ag::Var y = ag::sum(ag::apply(cube, {x}));
  tape.backward(y);
  BOOST_TEST(x.grad()(0) == 3.0);
  BOOST_TEST(x.grad()(1) == 12.0);
  BOOST_TEST(ag::custom_function(tape.node(1)) == nullptr);  // released by backward
}

BOOST_AUTO_TEST_CASE(a_wrongly_shaped_custom_gradient_is_refused_by_name) {
  const ag::Function bad{"bad_shape", [](const ag::Inputs& x) { return x[0]; },
                         [](const ag::Inputs&, const arma::mat&, const arma::mat& dy) {
                           return ag::Grads{arma::mat(dy.t())};
                         }};
  ag::Tape tape;
  ag::Var x = tape.leaf(arma::mat(2, 3, arma::fill::ones));
  ag::Var y = ag::apply(bad, {x});
  try {
    tape.backward(y, arma::mat(2, 3, arma::fill::ones));
    BOOST_FAIL("expected an error");
  } catch (const ag::Error& e) {
    BOOST_TEST(std::string(e.what()).find("bad_shape") != std::string::npos);
    BOOST_TEST(std::string(e.what()).find("3x2") != std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(the_per_node_check_names_the_first_wrong_node) {
  const ag::Function wrong_sign{"wrong_exp", [](const ag::Inputs& x) { return arma::mat(arma::exp(x[0])); },
                                [](const ag::Inputs&, const arma::mat& y, const arma::mat& dy) {
                                  return ag::Grads{-y % dy};
                                }};
  ag::Tape tape;
  ag::Var x = tape.leaf(arma::mat{{0.5, -1.0}, {2.0, 0.25}});
  ag::Var w = tape.leaf(arma::mat{{1.0, 2.0}, {-1.0, 0.5}});
  ag::Var h = ag::matmul(x, w);                   // node 2
  ag::Var s = ag::mul_scalar(ag::tanh(h), 1.5);   // nodes 3, 4
  ag::Var e = ag::apply(wrong_sign, {s});         // node 5
  ag::Var loss = ag::sum(ag::pow_scalar(e, 2.0)); // nodes 6, 7
  const ag::NodeCheckReport r = ag::check_nodes(tape);
  BOOST_TEST_MESSAGE(r.summary());
  BOOST_TEST_REQUIRE(r.first_wrong.has_value());
  BOOST_TEST(*r.first_wrong == e.id);
  BOOST_TEST(r.skipped == 0u);
  BOOST_TEST(r.nodes.size() == 6u);
  BOOST_TEST(r.summary().find("first wrong node: 5 'wrong_exp'") != std::string::npos);
  for (const ag::NodeCheck& c : r.nodes) {
    if (c.id != e.id) BOOST_TEST((c.status == ag::NodeStatus::Passed), c.op << ": " << c.note);
  }
  (void)loss;
}

BOOST_AUTO_TEST_CASE(a_tape_of_correct_builtins_passes_and_unknown_ops_are_skipped) {
  ag::Tape tape;
  ag::Var x = tape.leaf(arma::mat{{0.5, -1.0, 2.0}, {1.5, 0.25, -0.75}});
  ag::Var b = tape.leaf(arma::mat{{0.1, 0.2, 0.3}});
  ag::Var y = ag::var(ag::div(ag::exp(x + b), ag::add_scalar(ag::square(x), 1.0)), 1);
  ag::Var z = tape.record("mystery", {y}, y.value(), [](ag::Tape& t, const ag::Node& n) {
    t.accumulate(n.inputs[0], n.grad);
  });
  const ag::NodeCheckReport r = ag::check_nodes(tape);
  BOOST_TEST(!r.first_wrong.has_value(), r.summary());
  BOOST_TEST(r.skipped == 1u);
  (void)z;
}

BOOST_AUTO_TEST_CASE(fused_norms_and_scalar_ops_replay_with_their_attributes) {
  ag::Tape tape;
  ag::Var x = tape.leaf(arma::mat{{0.5, -1.0, 2.0, 0.0}, {1.5, 0.25, -0.75, 3.0}});
  ag::Var zeros = tape.leaf(arma::mat(2, 4, arma::fill::zeros));  // c * 0 cannot tell c: the attribute can
  ag::Var g = tape.leaf(arma::mat{{1.0, 0.5, -2.0, 1.5}});
  ag::Var b = tape.leaf(arma::mat{{0.1, 0.2, 0.3, 0.4}});
  ag::Var ln = ag::layernorm_fused(x, g, b, 0.25);  // a large eps: replaying with 1e-5 would fail
  ag::Var rms = ag::rmsnorm_fused(x, g, 0.5);
  ag::Var y = ag::add(ag::mul_scalar(zeros, 3.0), ag::pow_scalar(ag::add_scalar(ag::square(ln), 1.0), 1.5));
  ag::Var loss = ag::sum(ag::add(y, rms));
  const ag::NodeCheckReport r = ag::check_nodes(tape);
  BOOST_TEST(!r.first_wrong.has_value(), r.summary());
  BOOST_TEST(r.skipped == 0u, r.summary());
  BOOST_TEST(ag::attribute(tape.node(ln.id), "eps") == 0.25);
  BOOST_TEST(ag::op_label(tape.node(rms.id)) == "rmsnorm_fused eps=0.5");
  BOOST_CHECK_THROW(ag::attribute(tape.node(ln.id), "c"), ag::Error);
  (void)loss;
}

BOOST_AUTO_TEST_SUITE_END()
