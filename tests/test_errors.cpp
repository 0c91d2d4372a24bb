#define BOOST_TEST_MODULE errors
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <functional>

#include "autograd/parameter.h"
#include "ops/layernorm.h"
#include "nn/optim.h"
#include "ops/ops.h"

// Errors that teach: each message names the op, the shapes and what was
// expected. test_tape.cpp has the first case of each kind; these go further.
using namespace ag;
namespace bdata = boost::unit_test::data;

namespace {

// The message of the ag::Error that f throws ("" and a test failure if none).
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  BOOST_ERROR("expected an ag::Error");
  return "";
}

bool has(const std::string& msg, const std::string& fragment) { return msg.find(fragment) != std::string::npos; }

using Binary = std::function<Var(Var, Var)>;
const std::vector<std::pair<std::string, Binary>>& binary_ops() {
  static const std::vector<std::pair<std::string, Binary>> ops = {
      {"add", [](Var a, Var b) { return add(a, b); }}, {"sub", [](Var a, Var b) { return sub(a, b); }},
      {"mul", [](Var a, Var b) { return mul(a, b); }}, {"div", [](Var a, Var b) { return div(a, b); }},
      {"matmul", [](Var a, Var b) { return matmul(a, b); }}};
  return ops;
}

std::vector<std::string> binary_names() {
  std::vector<std::string> names;
  for (const auto& op : binary_ops()) names.push_back(op.first);
  return names;
}

Binary binary(const std::string& name) {
  for (const auto& op : binary_ops()) {
    if (op.first == name) return op.second;
  }
  throw std::runtime_error("no op " + name);
}

using Unary = std::function<Var(Var)>;
const std::vector<std::pair<std::string, Unary>>& unary_ops() {
  static const std::vector<std::pair<std::string, Unary>> ops = {
      {"neg", [](Var a) { return neg(a); }},           {"add_scalar", [](Var a) { return a + 1.0; }},
      {"mul_scalar", [](Var a) { return a * 2.0; }},   {"pow_scalar", [](Var a) { return pow_scalar(a, 2); }},
      {"exp", [](Var a) { return exp(a); }},           {"log", [](Var a) { return log(a); }},
      {"sqrt", [](Var a) { return sqrt(a); }},         {"square", [](Var a) { return square(a); }},
      {"tanh", [](Var a) { return tanh(a); }},         {"sigmoid", [](Var a) { return sigmoid(a); }},
      {"relu", [](Var a) { return relu(a); }},         {"transpose", [](Var a) { return transpose(a); }},
      {"sum", [](Var a) { return sum(a); }},           {"mean", [](Var a) { return mean(a, 0); }},
      {"var", [](Var a) { return var(a, 1); }},        {"max", [](Var a) { return max(a, 1); }},
      {"logsumexp", [](Var a) { return logsumexp(a, 0); }}};
  return ops;
}

std::vector<std::string> unary_names() {
  std::vector<std::string> names;
  for (const auto& op : unary_ops()) names.push_back(op.first);
  return names;
}

Unary unary(const std::string& name) {
  for (const auto& op : unary_ops()) {
    if (op.first == name) return op.second;
  }
  throw std::runtime_error("no op " + name);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(shapes)

// Both row and column counts mismatched: no broadcast can rescue it, and no matmul either.
BOOST_DATA_TEST_CASE(every_binary_op_names_itself_and_both_shapes, bdata::make(binary_names()), name) {
  Tape tape;
  Var a = tape.leaf(arma::mat(2, 3, arma::fill::ones)), b = tape.leaf(arma::mat(4, 5, arma::fill::ones));
  const std::string msg = error_of([&] { (void)binary(name)(a, b); });
  BOOST_TEST(msg.rfind(name + ":", 0) == 0u, msg);  // the message starts with the op
  BOOST_TEST(has(msg, "2x3"), msg);
  BOOST_TEST(has(msg, "4x5"), msg);
  BOOST_TEST(tape.size() == 2u);  // nothing was recorded
}

BOOST_DATA_TEST_CASE(elementwise_ops_say_which_dimension_differs, bdata::make(binary_names()), name) {
  if (name == "matmul") return;
  Tape tape;
  Var a = tape.leaf(arma::mat(2, 3, arma::fill::ones)), b = tape.leaf(arma::mat(2, 4, arma::fill::ones));
  const std::string msg = error_of([&] { (void)binary(name)(a, b); });
  BOOST_TEST(has(msg, "column counts differ and neither is 1"), msg);
}

BOOST_AUTO_TEST_CASE(matmul_says_which_sizes_must_agree) {
  Tape tape;
  Var a = tape.leaf(arma::mat(2, 3, arma::fill::ones)), b = tape.leaf(arma::mat(2, 3, arma::fill::ones));
  const std::string msg = error_of([&] { (void)matmul(a, b); });
  BOOST_TEST(has(msg, "the first has 3 columns, the second 2 rows"), msg);
}

BOOST_AUTO_TEST_CASE(reductions_name_a_bad_dim) {
  Tape tape;
  Var a = tape.leaf(arma::mat(2, 3, arma::fill::ones));
  for (const char* op : {"sum", "mean", "var", "max", "logsumexp"}) {
    const std::string msg = error_of([&] {
      const std::string o = op;
      if (o == "sum") (void)sum(a, 2);
      if (o == "mean") (void)mean(a, 2);
      if (o == "var") (void)var(a, 2);
      if (o == "max") (void)max(a, -3);
      if (o == "logsumexp") (void)logsumexp(a, 5);
    });
    BOOST_TEST(msg.rfind(std::string(op) + ": dim must be 0", 0) == 0u, msg);
  }
}

BOOST_AUTO_TEST_CASE(unbiased_variance_of_one_row_names_the_shape) {
  Tape tape;
  const std::string msg = error_of([&] { (void)var(tape.leaf(arma::mat(1, 4, arma::fill::ones)), 0, true); });
  BOOST_TEST(has(msg, "at least 2"), msg);
  BOOST_TEST(has(msg, "1x4"), msg);
}

BOOST_AUTO_TEST_CASE(a_tiny_negative_eps_is_printed_as_itself) {
  Tape tape;
  Var x = tape.leaf(arma::mat(2, 3, arma::fill::randu)), g = tape.leaf(arma::mat(1, 3, arma::fill::ones));
  Var b = tape.leaf(arma::mat(1, 3, arma::fill::zeros));
  const std::string fused = error_of([&] { (void)layernorm_fused(x, g, b, -1e-9); });
  BOOST_TEST(has(fused, "eps must be a positive number, got -1e-09"), fused);
  const std::string composed = error_of([&] { (void)layernorm_composed(x, g, b, -1e-9); });
  BOOST_TEST(has(composed, "got -1e-09"), composed);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(stale_and_empty_values)

BOOST_DATA_TEST_CASE(every_op_rejects_a_value_from_a_cleared_tape, bdata::make(unary_names()), name) {
  Tape tape;
  Var old = tape.leaf(arma::mat(2, 3, arma::fill::value(0.5)));
  tape.clear();
  // The new leaf takes the old one's id: only the generation tells them apart.
  Var fresh = tape.leaf(arma::mat(2, 3, arma::fill::value(0.5)));
  BOOST_TEST(fresh.id == old.id);
  const std::string msg = error_of([&] { (void)unary(name)(old); });
  BOOST_TEST(has(msg, "cleared"), msg);
  BOOST_TEST(msg.rfind(name, 0) == 0u, msg);
  BOOST_TEST(unary(name)(fresh).value().is_finite());
}

BOOST_DATA_TEST_CASE(every_binary_op_rejects_an_empty_var, bdata::make(binary_names()), name) {
  Tape tape;
  Var a = tape.leaf(arma::mat(2, 2, arma::fill::ones));
  const std::string first = error_of([&] { (void)binary(name)(Var{}, a); });
  BOOST_TEST(has(first, name), first);
  BOOST_TEST(has(first, "never recorded"), first);
  // The second input too, and not mistaken for a value from another tape.
  const std::string second = error_of([&] { (void)binary(name)(a, Var{}); });
  BOOST_TEST(has(second, name), second);
  BOOST_TEST(has(second, "second input is an empty Var"), second);
  BOOST_TEST(!has(second, "different tapes"), second);
}

BOOST_AUTO_TEST_CASE(reading_a_value_after_clear_says_so) {
  Tape tape;
  Var x = tape.leaf(arma::mat(2, 2, arma::fill::ones));
  tape.clear();
  BOOST_TEST(has(error_of([&] { (void)x.value(); }), "cleared"));
  BOOST_TEST(has(error_of([&] { (void)x.grad(); }), "cleared"));
  BOOST_TEST(has(error_of([&] { (void)Var{}.value(); }), "never recorded"));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(backward_misuse)

// The usual way to hit it: a training loop that keeps a value from the last step.
BOOST_AUTO_TEST_CASE(a_new_loss_on_an_old_graph_names_the_freed_node) {
  Tape tape;
  Var x = tape.leaf(arma::mat(1, 3, arma::fill::value(0.5)));
  Var hidden = tanh(x * 2.0);
  tape.backward(sum(hidden));
  Var loss2 = sum(square(hidden));  // new nodes on top of freed ones
  const std::string msg = error_of([&] { tape.backward(loss2); });
  BOOST_TEST(has(msg, "backward through 'tanh' (node 2, 1x3) a second time"), msg);
  BOOST_TEST(has(msg, "retain_graph=true"), msg);
}

BOOST_AUTO_TEST_CASE(retain_graph_allows_the_second_pass_and_gradients_add) {
  Tape tape;
  Var x = tape.leaf(arma::mat(1, 1, arma::fill::value(2.0)));
  Var y = exp(x);
  tape.backward(y, true);
  tape.backward(y, true);
  tape.backward(y);
  BOOST_TEST(x.grad()(0) == 3.0 * std::exp(2.0), boost::test_tools::tolerance(1e-12));
}

BOOST_AUTO_TEST_CASE(a_wrong_shape_from_a_custom_backward_names_both_nodes) {
  Tape tape;
  Var x = tape.leaf(arma::mat(3, 2, arma::fill::ones), "x");
  Var w = tape.leaf(arma::mat(1, 2, arma::fill::ones), "w");
  // Forgot to sum the broadcast gradient back to w's 1x2.
  Var y = tape.record("my_scale", {x, w}, x.value() % arma::repmat(w.value(), 3, 1),
                      [](Tape& t, const Node& n) {
                        t.accumulate(n.inputs[0], n.grad % arma::repmat(t.value(n.inputs[1]), 3, 1));
                        t.accumulate(n.inputs[1], n.grad % t.value(n.inputs[0]));
                      },
                      Saved{{x, w}});
  const std::string msg = error_of([&] { tape.backward(sum(y)); });
  BOOST_TEST(has(msg, "backward of 'my_scale' (node 2, 3x2) produced a 3x2 gradient"), msg);
  BOOST_TEST(has(msg, "its input 'w' (node 1, 1x2); expected 1x2"), msg);
}

BOOST_AUTO_TEST_CASE(an_output_gradient_of_the_wrong_shape_names_both_shapes) {
  Tape tape;
  Var y = tape.leaf(arma::mat(2, 3, arma::fill::ones)) * 2.0;
  const std::string msg = error_of([&] { tape.backward(y, arma::mat(3, 2, arma::fill::ones)); });
  BOOST_TEST(has(msg, "the output gradient is 3x2"), msg);
  BOOST_TEST(has(msg, "'mul_scalar' (node 1, 2x3)"), msg);
}

BOOST_AUTO_TEST_CASE(backward_of_a_constant_says_nothing_needs_a_gradient) {
  Tape tape;
  Var c = tape.constant(arma::mat(1, 1, arma::fill::ones), "c");
  const std::string msg = error_of([&] { tape.backward(exp(c)); });
  BOOST_TEST(has(msg, "does not depend on any leaf or parameter"), msg);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(parameters)

BOOST_AUTO_TEST_CASE(an_in_place_update_between_forward_and_backward_does_not_change_the_gradient) {
  // The tape copies the parameter's value, so backward differentiates at the
  // value the forward saw: d sum(tanh(x W)) / dW with W = 1, not W = 0.9.
  Parameter w("fc1.weight", arma::mat(2, 2, arma::fill::ones));
  Tape tape;
  const arma::mat x(3, 2, arma::fill::ones);
  Var h = tanh(matmul(tape.leaf(x), tape.param(w)));
  w.mutable_value() -= 0.1;  // an optimizer step before backward
  tape.backward(sum(h));
  const arma::mat expected = x.t() * (1 - arma::square(arma::tanh(x * arma::mat(2, 2, arma::fill::ones))));
  BOOST_TEST(arma::approx_equal(w.grad(), expected, "absdiff", 1e-15));
}

BOOST_AUTO_TEST_CASE(an_update_is_fine_when_no_backward_reads_the_parameter) {
  // add's backward does not read its inputs, so changing the bias is harmless.
  Parameter b("fc1.bias", arma::mat(1, 2, arma::fill::zeros));
  Tape tape;
  Var y = sum(tape.leaf(arma::mat(3, 2, arma::fill::ones)) + tape.param(b));
  b.mutable_value() += 1.0;
  tape.backward(y);
  BOOST_TEST(b.grad()(0, 1) == 3.0);
}

BOOST_AUTO_TEST_CASE(an_update_before_recording_is_fine) {
  Parameter w("w", arma::mat(1, 1, arma::fill::value(2.0)));
  w.mutable_value() *= 1.5;
  Tape tape;
  tape.backward(square(tape.param(w)));
  BOOST_TEST(w.grad()(0) == 6.0);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(anomaly_mode)

BOOST_AUTO_TEST_CASE(the_first_nan_in_forward_is_named_not_the_ops_after_it) {
  Tape tape;
  tape.set_anomaly_mode(true);
  Var x = tape.leaf(arma::mat{{1.0, -1.0}}, "x");
  const std::string msg = error_of([&] { (void)(sqrt(x * 2.0) * 3.0); });
  BOOST_TEST(has(msg, "anomaly: forward of 'sqrt' (node 2, 1x2) produced NaN or inf"), msg);
}

BOOST_AUTO_TEST_CASE(zero_times_sqrt_of_zero_is_named_in_backward) {
  // d/dz [0 * sqrt(z)] at z = 0 is 0 * 1/(2 sqrt 0) = 0 * inf = NaN.
  auto run = [](bool anomaly) {
    Tape tape;
    tape.set_anomaly_mode(anomaly);
    Var zero = tape.constant(arma::mat(1, 1, arma::fill::zeros), "zero");
    Var z = tape.leaf(arma::mat(1, 1, arma::fill::zeros), "z");
    Var y = zero * sqrt(z);
    tape.backward(y);
    return z.grad()(0);
  };
  BOOST_TEST(std::isnan(run(false)));  // silent without anomaly mode
  const std::string msg = error_of([&] { (void)run(true); });
  BOOST_TEST(has(msg, "anomaly: backward of 'sqrt' (node 2, 1x1)"), msg);
  BOOST_TEST(has(msg, "its input 'z' (node 1, 1x1)"), msg);
}

BOOST_AUTO_TEST_CASE(anomaly_errors_are_ag_errors) {
  Tape tape;
  tape.set_anomaly_mode(true);
  Var x = tape.leaf(arma::mat(1, 1, arma::fill::value(-1.0)));
  BOOST_CHECK_THROW(log(x), AnomalyError);
  BOOST_CHECK_THROW(log(x), Error);
  tape.set_anomaly_mode(false);
  BOOST_TEST(std::isnan(log(x).value()(0)));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(library_misuse)

BOOST_AUTO_TEST_CASE(a_reshaped_parameter_is_an_ag_error_naming_it) {
  Parameter w("fc1.weight", arma::mat(2, 2, arma::fill::ones));
  w.mutable_value() = arma::mat(3, 3, arma::fill::ones);  // reshaped, gradient still 2x2
  Tape tape;
  const std::string msg = error_of([&] { (void)tape.param(w); });
  BOOST_TEST(has(msg, "parameter 'fc1.weight' is 3x3 but its gradient is 2x2"), msg);
  w.zero_grad();
  tape.backward(sum(tape.param(w)));  // zero_grad reshapes the gradient
  BOOST_TEST(w.grad()(2, 2) == 1.0);
}

BOOST_AUTO_TEST_CASE(accuracy_checks_its_shapes) {
  const std::string msg = error_of([] { (void)accuracy(arma::mat(3, 2, arma::fill::zeros), arma::uvec{0, 1}); });
  BOOST_TEST(has(msg, "accuracy: the logits are 3x2 but there are 2 labels"), msg);
  BOOST_TEST(has(error_of([] { (void)accuracy(arma::mat(2, 0), arma::uvec{0, 0}); }), "0 classes"));
}

BOOST_AUTO_TEST_CASE(a_negative_clip_norm_is_refused) {
  Parameter w("w", arma::mat(1, 2, arma::fill::ones));
  w.mutable_grad() = arma::mat{{3.0, 4.0}};
  const std::string msg = error_of([&] { (void)clip_grad_norm({&w}, -1.0); });
  BOOST_TEST(has(msg, "clip_grad_norm: max_norm must be >= 0, got -1"), msg);
  BOOST_TEST(w.grad()(0, 0) == 3.0);  // untouched, not reversed
  BOOST_TEST(clip_grad_norm({&w}, 1.0) == 5.0);
  BOOST_TEST(w.grad()(0, 1) == 4.0 / (5.0 + 1e-6), boost::test_tools::tolerance(1e-15));
}

// A handle from before a clear() must never match a later generation; with a
// 32-bit counter it did after 2^32 clears.
BOOST_AUTO_TEST_CASE(the_generation_counter_does_not_wrap) {
  static_assert(sizeof(Var::generation) == 8, "a 32-bit generation wraps after 2^32 clear() calls");
  BOOST_TEST(sizeof(Var::generation) == 8u);
}

BOOST_AUTO_TEST_SUITE_END()
