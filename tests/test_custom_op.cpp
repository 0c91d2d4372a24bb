#define BOOST_TEST_MODULE custom_op
#include <boost/test/unit_test.hpp>

#include <string>

#include "autograd/custom_op.h"
#include "autograd/forward.h"
#include "autograd/gradcheck.h"
#include "ops/ops.h"

using namespace ag;

namespace {
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no ag::Error)";
}
bool has(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

const Function cube{"cube", [](const Inputs& x) { return arma::mat(arma::pow(x[0], 3)); },
                    [](const Inputs& x, const arma::mat&, const arma::mat& dy) {
                      return Grads{3 * arma::square(x[0]) % dy};
                    }};
}  // namespace

BOOST_AUTO_TEST_SUITE(used_like_a_builtin)

BOOST_AUTO_TEST_CASE(its_gradient_flows_and_passes_gradcheck) {
  Tape tape;
  Var x = tape.leaf(2.0);
  Var y = apply(cube, {x}) * 2.0;
  const Function* behind = custom_function(tape.node(1));  // tools find the Function behind a node
  BOOST_TEST_REQUIRE(behind != nullptr);
  BOOST_TEST(behind->name == "cube");
  BOOST_TEST(custom_function(tape.node(2)) == nullptr);     // a built-in mul_scalar
  tape.backward(y);
  BOOST_TEST(y.item() == 16.0);
  BOOST_TEST(x.grad()(0) == 24.0);  // 2 * 3 x^2
  BOOST_TEST(custom_function(tape.node(1)) == nullptr);     // released by backward
  const TapeFunction f = [](Tape&, const std::vector<Var>& v) { return apply(cube, {v[0]}); };
  BOOST_TEST(gradcheck(f, {arma::mat{{0.5, -1.5}, {2.0, 0.25}}}).passed);
}

BOOST_AUTO_TEST_CASE(a_wrong_number_or_shape_of_gradients_is_refused_by_name) {
  const Function two{"two_grads", [](const Inputs& x) { return x[0]; },
                     [](const Inputs& x, const arma::mat&, const arma::mat&) { return Grads{x[0], x[0]}; }};
  const Function bad{"bad_shape", [](const Inputs& x) { return x[0]; },
                     [](const Inputs&, const arma::mat&, const arma::mat&) { return Grads{arma::mat(1, 2)}; }};
  Tape tape;
  Var x = tape.leaf(arma::mat(2, 2, arma::fill::ones));
  std::string msg = error_of([&] { tape.backward(sum(apply(two, {x}))); });
  BOOST_TEST(has(msg, "'two_grads' returned 2 gradients for 1 inputs"), msg);
  msg = error_of([&] { tape.backward(sum(apply(bad, {x}))); });
  BOOST_TEST(has(msg, "'bad_shape' returned a 1x2 gradient for input 0, which is 2x2"), msg);
}

// Forward and backward read the tape's values in place (no copy per input per
// call); a copy the op makes of an input is its own, and so is what it returns.
BOOST_AUTO_TEST_CASE(it_reads_the_tapes_values_in_place_and_returns_its_own_matrices) {
  const double* read_forward = nullptr;
  const double* read_backward = nullptr;
  const Function same{"same",
                      [&](const Inputs& x) {
                        read_forward = x[0].memptr();
                        return x[0];
                      },
                      [&](const Inputs& x, const arma::mat&, const arma::mat& dy) {
                        read_backward = x[0].memptr();
                        arma::mat changed = x[0];
                        changed.fill(7);
                        return Grads{dy};
                      }};
  Tape tape;
  Var x = tape.leaf(arma::mat{{1, 2}, {3, 4}});
  Var y = apply(same, {x});
  BOOST_TEST(read_forward == x.value().memptr());
  BOOST_TEST(y.value().memptr() != x.value().memptr());
  tape.backward(sum(y));
  BOOST_TEST(read_backward == x.value().memptr());
  BOOST_TEST(arma::approx_equal(x.value(), arma::mat{{1, 2}, {3, 4}}, "absdiff", 0.0));
  BOOST_TEST(arma::approx_equal(x.grad(), arma::mat(2, 2, arma::fill::ones), "absdiff", 0.0));
  Tape empty_tape;  // an empty input: read as an empty matrix of its shape
  Var e = empty_tape.leaf(arma::mat(0, 3));
  BOOST_TEST(apply(same, {e}).cols() == 3u);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(a_backward_may_not_change_the_tape)

// The natural mistake: computing the gradient with ops on a Var captured from
// the forward, instead of with Armadillo on the values backward receives.
BOOST_AUTO_TEST_CASE(an_op_called_inside_a_custom_backward_names_the_custom_node) {
  Tape tape;
  Var x = tape.leaf(arma::mat(2, 2, arma::fill::value(0.5)));
  const Function exp_wrong{"my_exp", [](const Inputs& in) { return arma::mat(arma::exp(in[0])); },
                           [x](const Inputs&, const arma::mat&, const arma::mat& dy) {
                             return Grads{exp(x).value() % dy};  // records on the tape being walked
                           }};
  Var y = sum(apply(exp_wrong, {x}));
  const std::string msg = error_of([&] { tape.backward(y); });
  BOOST_TEST(has(msg, "backward of 'my_exp' (node 1, 2x2) recorded a node 'exp'"), msg);
  BOOST_TEST(has(msg, "may only accumulate into its inputs' gradients"), msg);
  BOOST_TEST(tape.size() == 3u);  // leaf, my_exp, sum: nothing was added
}

BOOST_AUTO_TEST_CASE(a_leaf_made_inside_a_custom_backward_is_refused) {
  Tape tape;
  Var x = tape.leaf(1.0);
  Tape* t = &tape;
  const Function f{"leafy", [](const Inputs& in) { return in[0]; },
                   [t](const Inputs&, const arma::mat&, const arma::mat& dy) {
                     return Grads{t->leaf(arma::mat(dy)).value()};
                   }};
  const std::string msg = error_of([&] { tape.backward(apply(f, {x})); });
  BOOST_TEST(has(msg, "backward of 'leafy' (node 1, 1x1) recorded a node 'leaf'"), msg);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(a_jvp_rule_may_not_clear_the_tape)

// clear() inside a JVP rule would destroy the rule (and the node it reads) while
// it runs; it is refused by name, and the tape keeps every node it had.
BOOST_AUTO_TEST_CASE(clear_inside_a_jvp_rule_is_refused_by_name) {
  Tape tape;
  Var x = tape.leaf(arma::mat{{0.5, -1.0}});
  Function f = cube;
  f.name = "clearing_cube";
  f.jvp = [](const JvpArgs& a) {
    a.tape.clear();
    return 3.0 * square(a.x[0]) * a.dx[0];
  };
  Var y = apply(f, {x});
  const std::size_t before = tape.size();
  const std::string msg = error_of([&] { push_tangents(y, {{x, tape.constant(arma::mat{{1.0, 1.0}})}}); });
  BOOST_TEST(has(msg, "clear: called inside the JVP rule of 'clearing_cube' (node 1, 1x2)"), msg);
  BOOST_TEST(tape.size() == before + 1);  // the seed; the rule recorded nothing before clear()
  BOOST_TEST(y.value()(1) == -1.0);       // y is still alive
  BOOST_TEST(!tape.recording_tangents());
  // The same rule's tape works on afterwards, and clear() outside a rule is fine.
  tape.clear();
  BOOST_TEST(tape.size() == 0u);
}

BOOST_AUTO_TEST_SUITE_END()
