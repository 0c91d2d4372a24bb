#define BOOST_TEST_MODULE tape
#include <boost/test/unit_test.hpp>

#include "autograd/tape.h"
#include "ops/ops.h"

using namespace ag;

namespace {
arma::mat scalar(double v) { return arma::mat(1, 1, arma::fill::value(v)); }

// Checks that f throws ag::Error whose message contains every fragment.
template <class F>
void check_error(F f, std::initializer_list<const char*> fragments) {
  try {
    f();
    BOOST_ERROR("expected an ag::Error");
  } catch (const Error& e) {
    const std::string msg = e.what();
    for (const char* frag : fragments) {
      BOOST_TEST(msg.find(frag) != std::string::npos, "message '" << msg << "' lacks '" << frag << "'");
    }
  }
}
}  // namespace

BOOST_AUTO_TEST_SUITE(hand_checked_graphs)

BOOST_AUTO_TEST_CASE(x_times_x_at_3_gives_6) {
  Tape tape;
  Var x = tape.leaf(scalar(3));
  Var y = x * x;
  tape.backward(y);
  BOOST_TEST(y.value()(0) == 9.0);
  BOOST_TEST(x.grad()(0) == 6.0);
}

BOOST_AUTO_TEST_CASE(doubling_twice_gives_4) {
  Tape tape;
  Var a = tape.leaf(scalar(1));
  Var b = a + a;
  Var c = b + b;
  tape.backward(c);
  BOOST_TEST(c.value()(0) == 4.0);
  BOOST_TEST(a.grad()(0) == 4.0);
  BOOST_TEST(b.grad()(0) == 2.0);
}

BOOST_AUTO_TEST_CASE(diamond_sums_both_paths) {
  // a feeds b = 2a and c = a^2; d = b * c = 2a^3, so dd/da = 6a^2 = 24 at a = 2.
  Tape tape;
  Var a = tape.leaf(scalar(2));
  Var b = 2.0 * a;
  Var c = square(a);
  Var d = b * c;
  tape.backward(d);
  BOOST_TEST(d.value()(0) == 16.0);
  BOOST_TEST(a.grad()(0) == 24.0);
}

BOOST_AUTO_TEST_CASE(equal_valued_leaves_get_their_own_gradients) {
  Tape tape;
  Var p = tape.leaf(scalar(3));
  Var q = tape.leaf(scalar(3));
  Var y = p * 5.0 + q * 7.0;
  tape.backward(y);
  BOOST_TEST(p.grad()(0) == 5.0);
  BOOST_TEST(q.grad()(0) == 7.0);
}

BOOST_AUTO_TEST_CASE(leaf_gradients_accumulate_across_backward_calls) {
  Tape tape;
  Var x = tape.leaf(scalar(3));
  Var y = x * x;
  tape.backward(y, true);
  tape.backward(y);
  BOOST_TEST(x.grad()(0) == 12.0);
}

BOOST_AUTO_TEST_CASE(unreached_leaf_has_zero_gradient) {
  Tape tape;
  Var x = tape.leaf(scalar(3));
  Var unused = tape.leaf(arma::mat(2, 3, arma::fill::ones));
  tape.backward(x * 2.0);
  BOOST_TEST(arma::accu(arma::abs(unused.grad())) == 0.0);
  BOOST_TEST(unused.grad().n_rows == 2u);
  BOOST_TEST(unused.grad().n_cols == 3u);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(engine)

BOOST_AUTO_TEST_CASE(deep_chain_of_100000_nodes_does_not_recurse) {
  Tape tape;
  Var x = tape.leaf(scalar(1));
  Var y = x;
  for (int i = 0; i < 100000; ++i) y = y + 1e-5;
  tape.backward(y);
  BOOST_TEST(tape.size() == 100001u);
  BOOST_TEST(x.grad()(0) == 1.0);
  BOOST_TEST(y.value()(0) == 2.0, boost::test_tools::tolerance(1e-9));
}

BOOST_AUTO_TEST_CASE(no_grad_records_no_backward) {
  Tape tape;
  Var x = tape.leaf(scalar(2));
  Var y;
  {
    NoGrad guard(tape);
    y = x * x;
    BOOST_TEST(!tape.grad_enabled());
  }
  BOOST_TEST(tape.grad_enabled());
  BOOST_TEST(y.value()(0) == 4.0);
  BOOST_TEST(tape.node(y.id).inputs.empty());
  BOOST_TEST(tape.saved_bytes() == 0u);
  check_error([&] { tape.backward(y); }, {"does not depend"});
}

BOOST_AUTO_TEST_CASE(saved_bytes_counts_each_tensor_once) {
  Tape tape;
  Var a = tape.leaf(arma::mat(4, 3, arma::fill::ones));
  Var b = tape.leaf(arma::mat(4, 3, arma::fill::ones));
  Var c = a * b;   // saves a and b
  Var d = c * a;   // saves c, and a again
  (void)d;
  BOOST_TEST(tape.saved_bytes() == 3u * 12u * sizeof(double));
  Var e = a + b;   // add saves nothing
  (void)e;
  BOOST_TEST(tape.saved_bytes() == 3u * 12u * sizeof(double));
}

BOOST_AUTO_TEST_CASE(parameters_outlive_tapes_and_accumulate) {
  Parameter w("w", scalar(3));
  for (int step = 0; step < 2; ++step) {
    Tape tape;
    Var y = square(tape.param(w));
    tape.backward(y);
  }
  BOOST_TEST(w.grad()(0) == 12.0);  // 6 + 6
  w.zero_grad();
  BOOST_TEST(w.grad()(0) == 0.0);
}

BOOST_AUTO_TEST_CASE(parameter_used_twice_on_one_tape) {
  Parameter w("w", scalar(3));
  Tape tape;
  Var a = tape.param(w);
  Var y = a * a + a;  // dy/dw = 2w + 1 = 7
  tape.backward(y, true);
  BOOST_TEST(w.grad()(0) == 7.0);
  tape.backward(y);  // a second backward adds once more, not twice
  BOOST_TEST(w.grad()(0) == 14.0);
}

BOOST_AUTO_TEST_CASE(non_scalar_output_needs_an_output_gradient) {
  Tape tape;
  Var x = tape.leaf(arma::mat(2, 3, arma::fill::ones));
  Var y = x * 2.0;
  check_error([&] { tape.backward(y); }, {"not 1x1", "2x3"});
  check_error([&] { tape.backward(y, arma::mat(3, 2, arma::fill::ones)); }, {"3x2", "2x3"});
  tape.backward(y, arma::mat(2, 3, arma::fill::value(0.5)));
  BOOST_TEST(x.grad()(1, 2) == 1.0);
}

BOOST_AUTO_TEST_CASE(cleared_tape_rejects_old_values) {
  Tape tape;
  Var x = tape.leaf(scalar(2));
  Var y = x * x;
  tape.clear();
  BOOST_TEST(tape.size() == 0u);
  check_error([&] { tape.backward(y); }, {"backward", "cleared"});
  check_error([&] { (void)(x + x); }, {"add", "cleared"});
}

BOOST_AUTO_TEST_CASE(second_backward_through_freed_node_is_an_error) {
  Tape tape;
  Var x = tape.leaf(scalar(2));
  Var y = x * x;
  tape.backward(y);
  check_error([&] { tape.backward(y); }, {"mul", "second time", "retain_graph"});
}

BOOST_AUTO_TEST_CASE(wrong_shape_from_a_backward_names_the_node) {
  Tape tape;
  Var x = tape.leaf(arma::mat(2, 2, arma::fill::ones));
  Var y = tape.record("broken_op", {x}, x.value() * 2.0, [](Tape& t, const Node& n) {
    t.accumulate(n.inputs[0], arma::mat(1, 2, arma::fill::ones));
  });
  check_error([&] { tape.backward(y, arma::mat(2, 2, arma::fill::ones)); }, {"broken_op", "1x2", "2x2"});
}

BOOST_AUTO_TEST_CASE(parameter_changed_after_saved_names_the_node) {
  Parameter w("fc.weight", arma::mat(2, 2, arma::fill::ones));
  Tape tape;
  Var x = tape.leaf(arma::mat(3, 2, arma::fill::ones));
  Var y = sum(matmul(x, tape.param(w)));
  w.mutable_value() *= 2.0;
  check_error([&] { tape.backward(y); }, {"matmul", "fc.weight", "modified in place"});
}

BOOST_AUTO_TEST_CASE(anomaly_mode_names_the_op) {
  Tape tape;
  tape.set_anomaly_mode(true);
  Var x = tape.leaf(scalar(-1));
  BOOST_CHECK_THROW(log(x), AnomalyError);
  Var z = tape.leaf(scalar(0));
  Var s = sqrt(z);  // forward is fine: sqrt(0) = 0
  check_error([&] { tape.backward(s * 0.0); }, {"sqrt", "NaN or inf"});
}

BOOST_AUTO_TEST_CASE(vars_from_different_tapes_do_not_mix) {
  Tape t1, t2;
  Var a = t1.leaf(scalar(1));
  Var b = t2.leaf(scalar(1));
  check_error([&] { (void)(a * b); }, {"mul", "different tapes"});
}

BOOST_AUTO_TEST_SUITE_END()
