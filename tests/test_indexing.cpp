// Picking, cutting and joining (ops/indexing.h): embedding lookups whose
// repeated indices accumulate, row and column blocks, concatenation, masks
// (with -inf under anomaly mode) and dropout, and their errors. The op table
// gradchecks each op on fixed indices and masks (tests/test_ops.cpp); these
// tests use the caller's own, and check that the per-node check replays them.
#define BOOST_TEST_MODULE indexing
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <limits>

#include "check/node_check.h"
#include "ops/ops.h"

using namespace ag;

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

// The message of the ag::Error that f throws ("" if it throws none).
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

BOOST_AUTO_TEST_SUITE(embedding_lookup)

BOOST_AUTO_TEST_CASE(gathers_rows_and_repeated_indices_accumulate) {
  Tape tape;
  Var table = tape.leaf(arma::mat{{1, 2, 3}, {4, 5, 6}, {7, 8, 9}, {10, 11, 12}});
  Var y = embedding(table, arma::uvec{2, 0, 2, 2});
  BOOST_TEST(shape_str(y.value()) == "4x3");
  BOOST_TEST(arma::approx_equal(y.value().row(0), table.value().row(2), "absdiff", 0));
  BOOST_TEST(arma::approx_equal(y.value().row(1), table.value().row(0), "absdiff", 0));
  const arma::mat dout{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {10, 20, 30}};
  tape.backward(y, dout);
  BOOST_TEST(arma::approx_equal(table.grad().row(2), arma::rowvec{11, 20, 31}, "absdiff", 0));  // rows 0, 2, 3 of dout
  BOOST_TEST(arma::approx_equal(table.grad().row(0), arma::rowvec{0, 1, 0}, "absdiff", 0));
  BOOST_TEST(arma::accu(arma::abs(table.grad().rows(1, 1))) == 0.0);
  BOOST_TEST(arma::accu(arma::abs(table.grad().rows(3, 3))) == 0.0);
}

BOOST_AUTO_TEST_CASE(an_index_past_the_table_names_it_and_the_shape) {
  Tape tape;
  Var table = tape.leaf(arma::mat(4, 3, arma::fill::ones));
  const std::string msg = error_of([&] { (void)embedding(table, arma::uvec{1, 4}); });
  BOOST_TEST(msg == "embedding: index 4 (position 1) is out of range for a 4x3 table; expected indices below 4");
  BOOST_TEST(has(error_of([&] { (void)embedding(tape.leaf(arma::mat(0, 3)), arma::uvec{0}); }), "0x3 table"));
}

BOOST_AUTO_TEST_CASE(no_indices_give_no_rows) {
  Tape tape;
  Var table = tape.leaf(arma::mat(4, 3, arma::fill::ones));
  Var y = embedding(table, arma::uvec());
  BOOST_TEST(shape_str(y.value()) == "0x3");
  tape.backward(y, arma::mat(0, 3));
  BOOST_TEST(shape_str(table.grad()) == "4x3");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(blocks_and_joins)

BOOST_AUTO_TEST_CASE(rows_and_cols_cut_a_block_and_send_the_gradient_back_into_it) {
  Tape tape;
  Var x = tape.leaf(arma::reshape(arma::regspace<arma::mat>(1, 12), 3, 4));
  Var r = rows(x, 1, 2), c = cols(x, 2, 1);
  BOOST_TEST(arma::approx_equal(r.value(), x.value().rows(1, 2), "absdiff", 0));
  BOOST_TEST(arma::approx_equal(c.value(), x.value().col(2), "absdiff", 0));
  tape.backward(sum(r) + sum(c * 10.0));
  const arma::mat expected{{0, 0, 10, 0}, {1, 1, 11, 1}, {1, 1, 11, 1}};
  BOOST_TEST(arma::approx_equal(x.grad(), expected, "absdiff", 0));
  BOOST_TEST(shape_str(rows(x, 3, 0).value()) == "0x4");  // an empty block at the end
  BOOST_TEST(error_of([&] { (void)rows(x, 2, 2); }) ==
             "rows: rows 2 to 2 + 2 - 1 are out of range for a 3x4 input (it has 3 rows)");
  BOOST_TEST(has(error_of([&] { (void)cols(x, 1, arma::uword(-1)); }), "cols: columns 1 to"));  // no overflow
}

BOOST_AUTO_TEST_CASE(hcat_and_vcat_join_and_split_the_gradient) {
  Tape tape;
  Var a = tape.leaf({{1, 2}, {3, 4}}), b = tape.leaf({{5}, {6}});
  Var h = hcat({a, b, a});  // a twice: its gradient adds up
  BOOST_TEST(arma::approx_equal(h.value(), arma::mat{{1, 2, 5, 1, 2}, {3, 4, 6, 3, 4}}, "absdiff", 0));
  tape.backward(h, arma::mat{{1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}});
  BOOST_TEST(arma::approx_equal(a.grad(), arma::mat{{5, 7}, {15, 17}}, "absdiff", 0));
  BOOST_TEST(arma::approx_equal(b.grad(), arma::mat(arma::colvec{3, 8}), "absdiff", 0));
  Tape t2;
  Var c = t2.leaf({{1, 2}}), d = t2.leaf({{3, 4}, {5, 6}});
  Var v = vcat({c, d});
  BOOST_TEST(arma::approx_equal(v.value(), arma::mat{{1, 2}, {3, 4}, {5, 6}}, "absdiff", 0));
  t2.backward(v, arma::mat{{1, 1}, {2, 2}, {3, 3}});
  BOOST_TEST(arma::approx_equal(d.grad(), arma::mat{{2, 2}, {3, 3}}, "absdiff", 0));
}

// How attention splits heads and merges them back: the round trip is the identity.
BOOST_AUTO_TEST_CASE(cutting_into_heads_and_joining_them_is_the_identity) {
  Tape tape;
  Var x = tape.leaf(Rng(1).uniform(6, 4, -1.0, 1.0));
  Var heads = hcat({cols(x, 0, 2), cols(x, 2, 2)});
  Var sequences = vcat({rows(heads, 0, 3), rows(heads, 3, 3)});
  BOOST_TEST(arma::approx_equal(sequences.value(), x.value(), "absdiff", 0));
  const arma::mat dout = Rng(2).uniform(6, 4, -1.0, 1.0);
  tape.backward(sequences, dout);
  BOOST_TEST(arma::approx_equal(x.grad(), dout, "absdiff", 0));
}

BOOST_AUTO_TEST_CASE(joins_refuse_mismatched_shapes_empty_lists_and_other_tapes) {
  Tape tape, other;
  Var a = tape.leaf(arma::mat(3, 4)), b = tape.leaf(arma::mat(2, 4));
  BOOST_TEST(error_of([&] { (void)hcat({a, b}); }) ==
             "hcat: part 1 is 2x4 but part 0 is 3x4; side by side, every part needs 3 rows");
  BOOST_TEST(error_of([&] { (void)vcat({a, tape.leaf(arma::mat(3, 1))}); }) ==
             "vcat: part 1 is 3x1 but part 0 is 3x4; stacked, every part needs 4 columns");
  BOOST_TEST(error_of([] { (void)hcat({}); }) == "hcat: no parts to join (an empty list); expected at least one Var");
  BOOST_TEST(error_of([] { (void)vcat({}); }) == "vcat: no parts to join (an empty list); expected at least one Var");
  BOOST_TEST(has(error_of([&] { (void)vcat({a, other.leaf(arma::mat(1, 4))}); }), "vcat: part 1 is not on part 0's tape"));
  BOOST_TEST(has(error_of([&] { (void)hcat({a, Var{}}); }), "hcat: part 1 is not on part 0's tape"));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(masks)

BOOST_AUTO_TEST_CASE(causal_mask_hides_the_future) {
  const arma::umat mask = causal_mask(3);
  const arma::umat expected = arma::trimatu(arma::umat(3, 3, arma::fill::ones), 1);  // 1 above the diagonal
  BOOST_TEST(arma::accu(mask != expected) == 0u);
  BOOST_TEST(arma::accu(mask) == 3u);
  BOOST_TEST((mask(0, 1) == 1u && mask(1, 0) == 0u && mask(2, 2) == 0u));
  BOOST_TEST(causal_mask(0).n_elem == 0u);
  BOOST_TEST(arma::accu(causal_mask(1)) == 0u);
}

BOOST_AUTO_TEST_CASE(masked_fill_writes_the_value_and_blocks_the_gradient) {
  Tape tape;
  tape.set_anomaly_mode(true);  // -inf where the mask says is not an anomaly
  Var x = tape.leaf(arma::mat{{1, 2}, {3, 4}});
  Var y = masked_fill(x, arma::umat{{0, 1}, {1, 0}}, -inf);
  BOOST_TEST(y.value()(0, 1) == -inf);
  BOOST_TEST(y.value()(1, 0) == -inf);
  BOOST_TEST(y.value()(1, 1) == 4.0);
  BOOST_TEST(tape.anomaly_mode());  // restored after recording
  tape.backward(y, arma::mat{{1, 2}, {3, 4}});
  BOOST_TEST(arma::approx_equal(x.grad(), arma::mat{{1, 0}, {0, 4}}, "absdiff", 0));
  BOOST_TEST(op_label(tape.node(y.id)) == "masked_fill value=-inf");
}

BOOST_AUTO_TEST_CASE(masked_fill_refuses_a_wrong_mask_a_nan_value_and_anomalies_outside_the_mask) {
  Tape tape;
  Var x = tape.leaf(arma::mat(2, 3, arma::fill::ones));
  BOOST_TEST(error_of([&] { (void)masked_fill(x, arma::umat(3, 2, arma::fill::zeros), 0.0); }) ==
             "masked_fill: the mask is 3x2 but x is 2x3; expected a mask of x's shape");
  BOOST_TEST(has(error_of([&] { (void)masked_fill(x, arma::umat(2, 3, arma::fill::zeros), std::nan("")); }),
                 "masked_fill: the value is NaN"));
  Var bad = tape.constant(arma::mat{{inf, 1.0}});  // recorded before anomaly mode
  tape.set_anomaly_mode(true);
  BOOST_CHECK_THROW(masked_fill(bad, arma::umat{{0, 1}}, -inf), AnomalyError);
  BOOST_CHECK_NO_THROW(masked_fill(bad, arma::umat{{1, 0}}, -inf));  // the inf is masked away
  BOOST_TEST(tape.anomaly_mode());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(dropout_)

BOOST_AUTO_TEST_CASE(eval_mode_and_p_zero_return_x_itself) {
  Tape tape;
  Var x = tape.leaf(arma::mat(3, 3, arma::fill::ones));
  Rng rng(1);
  BOOST_TEST(dropout(x, 0.5, rng, false).id == x.id);
  BOOST_TEST(dropout(x, 0.0, rng, true).id == x.id);
  BOOST_TEST(tape.size() == 1u);
}

BOOST_AUTO_TEST_CASE(p_outside_zero_to_one_throws) {
  Tape tape;
  Var x = tape.leaf(arma::mat(2, 2, arma::fill::ones));
  Rng rng(1);
  BOOST_TEST(error_of([&] { (void)dropout(x, 1.0, rng, true); }) ==
             "dropout: p = 1 for a 2x2 input; expected a drop probability in [0, 1) (p = 1 would drop everything)");
  BOOST_TEST(has(error_of([&] { (void)dropout(x, -0.1, rng, false); }), "dropout: p = -0.1"));
  BOOST_TEST(has(error_of([&] { (void)dropout(x, std::nan(""), rng, true); }), "dropout: p = nan"));
}

// 40,000 ones at p = 0.3: each output is 0 or 1/0.7, mean 1 with standard
// deviation sqrt(0.3/0.7/40000) = 0.0033; 0.02 is six of them.
BOOST_AUTO_TEST_CASE(the_mean_is_kept_the_seed_fixes_the_mask_and_dropped_entries_get_no_gradient) {
  const double p = 0.3;
  Tape tape;
  Var x = tape.leaf(arma::mat(200, 200, arma::fill::ones));
  Rng a(42), b(42), c(43);
  Var y = dropout(x, p, a, true);
  BOOST_TEST(std::abs(arma::mean(arma::vectorise(y.value())) - 1.0) < 0.02);
  const double dropped = double(arma::accu(y.value() == 0.0)) / y.value().n_elem;
  BOOST_TEST(std::abs(dropped - p) < 0.015);
  BOOST_TEST(arma::approx_equal(dropout(x, p, b, true).value(), y.value(), "absdiff", 0));
  BOOST_TEST(!arma::approx_equal(dropout(x, p, c, true).value(), y.value(), "absdiff", 0));
  tape.backward(y, arma::mat(200, 200, arma::fill::ones));
  const arma::umat kept = y.value() != 0.0;
  BOOST_TEST(arma::approx_equal(x.grad(), arma::conv_to<arma::mat>::from(kept) / (1 - p), "absdiff", 1e-15));
  BOOST_TEST(attribute(tape.node(y.id), "p") == p);
}

BOOST_AUTO_TEST_SUITE_END()

// The per-node check replays these nodes with the caller's indices, mask and
// keep-mask (not the op table's fixed ones): every node is checked, and passes.
BOOST_AUTO_TEST_CASE(the_per_node_check_replays_the_callers_indices_and_masks) {
  Tape tape;
  Rng rng(9);
  Var table = tape.leaf(rng.uniform(5, 3, -1.0, 1.0));
  Var tokens = embedding(table, arma::uvec{4, 1, 4, 0});  // 4 x 3
  Var scores = matmul(tokens, transpose(tokens));
  Var attention = softmax(masked_fill(scores, causal_mask(4), -inf), 1);
  Var out = dropout(hcat({rows(attention, 0, 2), rows(attention, 2, 2), rows(attention, 1, 2)}), 0.5, rng, true);
  Var loss = sum(vcat({cols(out, 0, 4), cols(out, 4, 4), cols(out, 8, 4)}));
  const NodeCheckReport r = check_nodes(tape);
  BOOST_TEST(!r.first_wrong.has_value(), r.summary());
  BOOST_TEST(r.skipped == 0u, r.summary());
  BOOST_TEST(r.nodes.size() == 15u, r.summary());
  (void)loss;
}
