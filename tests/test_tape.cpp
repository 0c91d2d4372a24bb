#define BOOST_TEST_MODULE tape
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <functional>

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
  // The inputs' ids stay (forward mode walks them); nothing is kept for backward.
  BOOST_TEST(tape.node(y.id).inputs.size() == 2u);
  BOOST_TEST(!tape.node(y.id).backward);
  BOOST_TEST(!tape.node(y.id).requires_grad);
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

// Var's fields are public: a handle made by hand with an id past the end of
// its (live) tape is refused by every path that reads a node, never read out of
// bounds. The hot path checks the id with the generation (autograd/var.cpp).
BOOST_AUTO_TEST_CASE(a_handle_made_by_hand_past_the_end_is_refused) {
  Tape tape;
  Var x = tape.leaf(scalar(2));
  Var forged = x;
  forged.id = 7;
  check_error([&] { (void)forged.value(); }, {"Var", "node 7"});
  check_error([&] { (void)forged.grad(); }, {"Var", "node 7"});
  check_error([&] { (void)(forged * x); }, {"mul", "node 7"});
  check_error([&] { (void)(x + forged); }, {"add", "node 7"});
  check_error([&] { tape.check(forged, "check"); }, {"check", "node 7 is past the end of its tape of 1 nodes"});
  check_error([&] { (void)tape.record("op", {forged}, x.value(), nullptr); }, {"op", "node 7"});
  BOOST_TEST(tape.size() == 1u);
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

// The backward of a slice adds its block where the slice came from; two
// blocks and a whole gradient into one input, and a block that does not fit.
BOOST_AUTO_TEST_CASE(blocks_of_a_gradient_add_where_they_belong) {
  Tape tape;
  Var x = tape.leaf(arma::mat(3, 4, arma::fill::ones));
  Var y = tape.record("two_blocks", {x}, x.value(), [](Tape& t, const Node& n) {
    t.accumulate_block(n.inputs[0], 1, 2, arma::mat{{1.0, 2.0}, {3.0, 4.0}});
    t.accumulate_block(n.inputs[0], 0, 0, arma::mat(1, 1, arma::fill::value(10.0)));
    t.accumulate(n.inputs[0], n.grad);
  });
  tape.backward(y, arma::mat(3, 4, arma::fill::value(0.5)));
  const arma::mat expected = {{10.5, 0.5, 0.5, 0.5}, {0.5, 0.5, 1.5, 2.5}, {0.5, 0.5, 3.5, 4.5}};
  BOOST_TEST(arma::approx_equal(x.grad(), expected, "absdiff", 0.0));
  Var z = tape.leaf(arma::mat(2, 2, arma::fill::ones));
  Var w = tape.record("overhanging", {z}, z.value(), [](Tape& t, const Node& n) {
    t.accumulate_block(n.inputs[0], 1, 1, arma::mat(2, 1, arma::fill::ones));
  });
  check_error([&] { tape.backward(w, arma::mat(2, 2, arma::fill::ones)); }, {"overhanging", "2x1 block at (1, 1)", "2x2"});
  tape.set_anomaly_mode(true);
  Var u = tape.leaf(arma::mat(2, 2, arma::fill::ones));
  Var v = tape.record("nan_block", {u}, u.value(), [](Tape& t, const Node& n) {
    t.accumulate_block(n.inputs[0], 0, 0, arma::mat(1, 1, arma::fill::value(std::nan(""))));
  });
  check_error([&] { tape.backward(v, arma::mat(2, 2, arma::fill::ones)); }, {"nan_block", "NaN or inf"});
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

BOOST_AUTO_TEST_SUITE(references)

// A reference into the tape stays valid until clear(), however many nodes
// come after it (the nodes never move). Under AddressSanitizer a moved node
// store would make these reads a heap-use-after-free.
BOOST_AUTO_TEST_CASE(value_and_grad_references_survive_4000_new_nodes) {
  Tape tape;
  Var x = tape.leaf(arma::mat(2, 3, arma::fill::value(1.5)));
  const arma::mat& v = x.value();
  const arma::mat& v_by_id = tape.value(x.id);
  const Node& node = tape.node(x.id);
  Var y = x;
  for (int i = 0; i < 4000; ++i) y = y * 1.0001;
  Var loss = sum(y);
  const arma::mat& g = x.grad();  // zeros, materialised before backward
  BOOST_TEST(g(0, 0) == 0.0);
  tape.backward(loss);
  BOOST_TEST(v(1, 2) == 1.5);
  BOOST_TEST(v_by_id(0, 0) == 1.5);
  BOOST_TEST(node.op == "leaf");
  BOOST_TEST(&g == &x.grad());  // the same matrix, now holding the gradient
  BOOST_TEST(g(1, 2) == std::pow(1.0001, 4000), boost::test_tools::tolerance(1e-12));
  for (int i = 0; i < 4000; ++i) (void)tape.leaf(1.0);
  BOOST_TEST(v(1, 2) == 1.5);
  BOOST_TEST(g(1, 2) == std::pow(1.0001, 4000), boost::test_tools::tolerance(1e-12));
}

BOOST_AUTO_TEST_CASE(a_cleared_tape_reuses_its_nodes_and_refuses_old_handles) {
  Tape tape;
  for (int step = 0; step < 3; ++step) {
    Var x = tape.leaf(arma::mat(4, 4, arma::fill::ones));
    Var y = sum(x * x);
    tape.backward(y);
    BOOST_TEST(y.item() == 16.0);
    BOOST_TEST(x.grad()(3, 3) == 2.0);
    tape.clear();
    BOOST_TEST(tape.size() == 0u);
    check_error([&] { (void)x.value(); }, {"cleared"});
  }
}

// rewind(mark) gives back the nodes after the mark: the ones before keep their
// Vars, values and gradients; a Var of a dropped node is refused, and never
// reads the node recorded in its place.
BOOST_AUTO_TEST_CASE(a_rewound_tape_keeps_what_came_before_the_mark) {
  Tape tape;
  Var x = tape.leaf(scalar(3.0));
  Var y = square(x);
  const std::size_t mark = tape.mark();
  for (int pass = 0; pass < 3; ++pass) {
    Var z = exp(y) * x;
    BOOST_TEST(tape.size() == mark + 2);
    tape.rewind(mark);
    BOOST_TEST(tape.size() == mark);
    Var w = sum(y);  // recorded where z was
    check_error([&] { (void)z.value(); }, {"(node 3) was dropped by a rewind() of its tape"});
    check_error([&] { (void)exp(z); }, {"exp: ", "dropped by a rewind()"});
    BOOST_TEST(w.item() == 9.0);
    BOOST_TEST(y.item() == 9.0);
    tape.backward(y, true);
    BOOST_TEST(x.grad()(0, 0) == 6.0 * (pass + 1));  // leaves accumulate, as ever
    tape.rewind(mark);
  }
  BOOST_TEST(tape.mark() == mark);
  tape.rewind(tape.size());  // nothing to give back: every Var stays valid
  BOOST_TEST(y.item() == 9.0);
  check_error([&] { tape.rewind(mark + 1); }, {"rewind: mark 3 is past the end of a tape of 2 nodes"});
  tape.clear();
  check_error([&] { (void)y.value(); }, {"cleared"});
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(backward_is_walked_never_changed)

// A hand-written node whose backward does `misuse` on the tape being walked.
Var misbehaving(Tape& tape, Var x, std::function<void(Tape&)> misuse) {
  return tape.record("misbehaving", {x}, x.value(), [misuse](Tape& t, const Node& self) {
    misuse(t);
    t.accumulate(self.inputs[0], self.grad);
  });
}

BOOST_AUTO_TEST_CASE(recording_inside_a_backward_names_the_node) {
  Tape tape;
  Var x = tape.leaf(2.0);
  Var y = misbehaving(tape, x, [x](Tape&) { (void)exp(x); });
  check_error([&] { tape.backward(y); },
              {"backward of 'misbehaving' (node 1, 1x1)", "recorded a node 'exp'", "may only accumulate"});
}

BOOST_AUTO_TEST_CASE(a_leaf_inside_a_backward_is_refused) {
  Tape tape;
  Var x = tape.leaf(2.0);
  Var y = misbehaving(tape, x, [](Tape& t) { (void)t.leaf(1.0); });
  check_error([&] { tape.backward(y); }, {"'misbehaving'", "recorded a node 'leaf'"});
}

BOOST_AUTO_TEST_CASE(clearing_inside_a_backward_is_refused) {
  Tape tape;
  Var x = tape.leaf(2.0);
  Var y = misbehaving(tape, x, [](Tape& t) { t.clear(); });
  check_error([&] { tape.backward(y); }, {"'misbehaving'", "cleared the tape", "may only accumulate"});
  BOOST_TEST(tape.size() == 2u);  // nothing was cleared
}

BOOST_AUTO_TEST_CASE(rewinding_inside_a_backward_is_refused) {
  Tape tape;
  Var x = tape.leaf(2.0);
  Var y = misbehaving(tape, x, [](Tape& t) { t.rewind(1); });
  check_error([&] { tape.backward(y); }, {"'misbehaving'", "rewound the tape"});
  BOOST_TEST(tape.size() == 2u);
}

BOOST_AUTO_TEST_CASE(a_backward_inside_a_backward_is_refused) {
  Tape tape;
  Var x = tape.leaf(2.0);
  Var z = square(x);
  Var y = misbehaving(tape, x, [z](Tape& t) { t.backward(z, true); });
  check_error([&] { tape.backward(y); }, {"'misbehaving'", "started another backward"});
}

BOOST_AUTO_TEST_CASE(after_a_refused_backward_the_tape_works_again) {
  Tape tape;
  Var x = tape.leaf(3.0);
  Var bad = misbehaving(tape, x, [x](Tape&) { (void)exp(x); });
  check_error([&] { tape.backward(bad, true); }, {"recorded"});
  Var y = x * x;  // recording works again: the tape left backward mode
  tape.backward(y);
  BOOST_TEST(y.item() == 9.0);
  BOOST_TEST(x.grad()(0) == 6.0);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(what_a_new_user_reaches_for)

BOOST_AUTO_TEST_CASE(a_scalar_leaf_and_item) {
  Tape tape;
  Var x = tape.leaf(-4.0);
  Var c = tape.constant(0.5);
  BOOST_TEST(x.rows() == 1u);
  BOOST_TEST(x.cols() == 1u);
  BOOST_TEST(x.item() == -4.0);
  Var y = x * c;
  tape.backward(y);
  BOOST_TEST(y.item() == -2.0);
  BOOST_TEST(x.grad()(0) == 0.5);
  check_error([&] { (void)tape.leaf(arma::mat(2, 3, arma::fill::zeros)).item(); }, {"item", "2x3", "not 1x1"});
}

BOOST_AUTO_TEST_CASE(rows_in_braces_including_1x1_and_a_column) {
  Tape tape;
  Var s = tape.leaf({{-4.0}});          // Armadillo alone finds these two ambiguous
  Var col = tape.leaf({{1.0}, {2.0}, {3.0}});
  Var m = tape.constant({{1.0, 2.0}, {3.0, 4.0}});
  BOOST_TEST(s.item() == -4.0);
  BOOST_TEST(col.shape() == "3x1");
  BOOST_TEST(col.value()(2, 0) == 3.0);
  BOOST_TEST(m.value()(1, 0) == 3.0);
  check_error([&] { (void)tape.leaf({{1.0, 2.0}, {3.0}}); }, {"leaf", "row 1 has 1 values, row 0 has 2"});
}

BOOST_AUTO_TEST_CASE(a_node_past_the_end_is_an_error) {
  Tape tape;
  (void)tape.leaf(1.0);
  check_error([&] { (void)tape.node(1); }, {"node", "id 1", "1 nodes"});
}

BOOST_AUTO_TEST_SUITE_END()

// An op described by an OpDef: its nodes carry the def's name and rule, and a
// wrong number of inputs is refused naming the op.
namespace {
const OpDef twice_def{"twice", 1, "y = 2a", "da = 2 dy", "dy = 2 da",
                      [](const JvpArgs& a) { return mul_scalar(a.dx[0], 2.0); }};
Var twice(Var a) {
  Tape& t = tape_of("twice", a);
  return t.record(twice_def, {a}, 2 * a.value(), [](Tape& t, const Node& n) { t.accumulate(n.inputs[0], 2 * n.grad); });
}
}  // namespace

BOOST_AUTO_TEST_CASE(a_node_recorded_through_an_op_def_carries_it) {
  Tape t;
  Var x = t.leaf(3.0);
  Var y = twice(x);
  const Node& n = t.node(y.id);
  BOOST_TEST(n.op == "twice");
  BOOST_TEST(n.def == &twice_def);
  BOOST_REQUIRE(static_cast<bool>(n.jvp));
  Var dy = n.jvp(JvpArgs{t, n, {t.var(n.inputs[0])}, t.var(y.id), {t.constant(5.0)}});
  BOOST_TEST(dy.item() == 10.0);
  check_error([&] { t.record(twice_def, {x, x}, scalar(1), nullptr); }, {"twice", "2 inputs", "takes 1"});
  check_error([&] { t.var(1000); }, {"past the end"});
}

// keep_intermediate_grads(false): each intermediate gradient is freed once its
// backward ran; the leaves' and parameters' gradients are the same to the bit.
BOOST_AUTO_TEST_CASE(freed_intermediate_gradients_leave_the_leaf_gradients_unchanged) {
  const arma::mat xv = {{0.5, -1.25, 2.0}, {3.0, 0.75, -0.5}};
  Parameter p("w", arma::mat{{1.5, -0.5, 0.25}});
  auto run = [&](bool keep, arma::mat& dx) {
    Tape t;
    t.keep_intermediate_grads(keep);
    Var x = t.leaf(xv, "x");
    Var h = tanh(x * t.param(p));  // broadcasting mul, then tanh
    Var loss = sum(h * h + x);
    t.backward(loss);
    dx = x.grad();
    if (keep) {
      BOOST_TEST(h.grad().n_elem == 6u);  // the default keeps every number on the way
    } else {
      check_error([&] { h.grad(); }, {"grad", "'tanh'", "freed", "keep_intermediate_grads(true)"});
      check_error([&] { loss.grad(); }, {"freed"});
      BOOST_TEST(t.node(h.id).grad.n_elem == 0u);  // freed, not only hidden: the node holds no matrix
    }
  };
  arma::mat kept, freed;
  run(true, kept);
  const arma::mat pg_kept = p.grad();
  p.zero_grad();
  run(false, freed);
  BOOST_TEST(arma::approx_equal(kept, freed, "absdiff", 0.0));
  BOOST_TEST(arma::approx_equal(pg_kept, p.grad(), "absdiff", 0.0));
}

// add, sub and add_scalar hand their own gradient (dy) to an input without a copy
// (Tape::take_grad) only when the tape keeps no intermediate gradients: when it
// keeps them, every gradient on the way stays readable, and the leaves get the same
// numbers either way.
BOOST_AUTO_TEST_CASE(a_pass_through_gradient_is_moved_only_when_nothing_keeps_it) {
  const arma::mat av = {{1.0, 2.0}}, bv = {{3.0, -4.0}};
  const arma::mat dc = 2.0 * (av + 1.0);  // L = sum(c^2), c = (a + b) - b + 1 = a + 1
  for (bool keep : {true, false}) {
    Tape t;
    t.keep_intermediate_grads(keep);
    Var a = t.leaf(av, "a"), b = t.leaf(bv, "b");
    Var s = add(a, b);
    Var d = sub(s, b);
    Var c = add_scalar(d, 1.0);
    t.backward(sum(c * c));
    BOOST_TEST(arma::approx_equal(a.grad(), dc, "absdiff", 0.0));
    BOOST_TEST(arma::approx_equal(b.grad(), arma::mat(1, 2, arma::fill::zeros), "absdiff", 0.0));  // dc - dc
    if (keep) {
      for (Var v : {s, d, c}) BOOST_TEST(arma::approx_equal(v.grad(), dc, "absdiff", 0.0));
    }
  }
  Tape t;  // outside a backward pass it is a copy
  t.keep_intermediate_grads(false);
  Var x = t.leaf(2.0, "x");
  Var y = add_scalar(x, 1.0);
  t.backward(y);
  BOOST_TEST(t.take_grad(t.node(x.id)).n_elem == 1u);
  BOOST_TEST(x.grad()(0) == 1.0);
}

// A retained graph runs backward again; a pass that keeps the gradients makes
// the ones an earlier pass freed readable again.
BOOST_AUTO_TEST_CASE(a_retained_graph_with_freed_gradients_runs_backward_again) {
  Tape t;
  t.keep_intermediate_grads(false);
  Var x = t.leaf(2.0, "x");
  Var xx = x * x;
  Var y = mul_scalar(xx, 3.0);  // 3 x^2: dy/dx = 6x = 12
  t.backward(y, true);
  check_error([&] { xx.grad(); }, {"'mul'", "freed"});
  t.keep_intermediate_grads(true);
  t.backward(y);
  BOOST_TEST(x.grad()(0) == 24.0);  // leaves accumulate over the two passes
  BOOST_TEST(xx.grad()(0) == 3.0);  // dy/d(x^2), kept by the second pass
  BOOST_TEST(y.grad()(0) == 1.0);
}
