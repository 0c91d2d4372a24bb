// The grader's reference is exact: every exercise's gradient comes from the
// tape's own backward, it agrees with the forward the child is sent (and with
// finite differences to their accuracy), and a "backward" that differentiates
// the forward numerically, by central differences at any usual step, scores 0
// on every exercise, while the reference solutions keep full marks
// (test_assignments.cpp). The figures printed are those docs/grading.md quotes.
#define BOOST_TEST_MODULE assignments_exact
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstdio>

#include "assignments/kit/grader.h"
#include "autograd/gradcheck.h"

namespace {

using Mats = std::vector<arma::mat>;

kit::Exercise exercise(const std::string& name) { return kit::load_exercise(AUTOGRAD_SOURCE_DIR "/assignments", name); }

const std::vector<std::string> kNames = {"softmax", "layernorm", "rmsnorm", "matmul_bias",
                                         "batchnorm", "engine",    "log_softmax_ce"};

double relative_error(const arma::mat& a, const arma::mat& exact) {
  return arma::abs(a - exact).max() / std::max(arma::abs(exact).max(), 1e-300);
}

// The forward's inputs as a student could rebuild them from what the child is
// sent: softmax's x as log(y) (softmax ignores a shift), an input not sent
// (beta, b) as zeros, which changes no gradient of these forwards.
Mats rebuilt_inputs(const kit::Exercise& ex, const Mats& sent, const arma::mat& dy) {
  const kit::ExerciseSpec& s = ex.spec;
  Mats inputs;
  for (const kit::InputSpec& in : s.inputs) {
    const auto at = std::find(s.sends.begin(), s.sends.end(), in.name);
    if (at != s.sends.end()) inputs.push_back(sent[std::size_t(at - s.sends.begin())]);
    else if (s.forward == "softmax") inputs.push_back(arma::log(sent[0]));
    else inputs.push_back(arma::zeros(1, inputs.empty() ? dy.n_cols : inputs.back().n_cols));
  }
  return inputs;
}

// The cheat of issue 25: central differences of sum(dy * forward) with step h, for every input.
kit::Answerer central_differences(const kit::Exercise& ex, double h) {
  return [ex, h](const Mats& sent) {
    const auto dy_at = std::find(ex.spec.sends.begin(), ex.spec.sends.end(), "dy");
    const arma::mat dy = sent[std::size_t(dy_at - ex.spec.sends.begin())];
    const Mats inputs = rebuilt_inputs(ex, sent, dy);
    Mats grads;
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      grads.push_back(ag::numeric_gradient([&](const ag::Inputs& x) { return arma::accu(ex.forward(x) % dy); },
                                           inputs, k, h));
    }
    return grads;
  };
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_tape_reference_computes_the_forward_the_child_is_sent) {
  for (const std::string& name : kNames) {
    const kit::Exercise ex = exercise(name);
    for (const kit::DrawnCase& c : kit::draw_cases(ex, 3)) {
      ag::Tape tape;
      std::vector<ag::Var> vars;
      for (const arma::mat& m : c.inputs) vars.push_back(tape.leaf(m));
      BOOST_TEST(relative_error(ex.tape_forward(vars).value(), c.y) < 1e-13, name << " " << c.label);
    }
  }
}

BOOST_AUTO_TEST_CASE(the_exact_reference_agrees_with_finite_differences_to_their_accuracy) {
  for (const std::string& name : kNames) {
    const kit::Exercise ex = exercise(name);
    for (const kit::DrawnCase& c : kit::draw_cases(ex, 5)) {
      if (c.on_tape) continue;
      const Mats exact = kit::exact_gradients(ex, c.inputs, c.dy);
      for (std::size_t k = 0; k < exact.size(); ++k) {
        const arma::mat numeric = ag::numeric_gradient(
            [&](const ag::Inputs& x) { return arma::accu(ex.forward(x) % c.dy); }, c.inputs, k);
        BOOST_TEST(relative_error(numeric, exact[k]) < 1e-6, name << " " << c.label << " input " << k);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(central_differences_of_the_forward_earn_no_points_on_any_exercise) {
  for (const std::string& name : kNames) {
    const kit::Exercise ex = exercise(name);
    for (double h : {1e-4, 1e-5, 6e-6, 1e-6}) {
      const kit::GradeReport r = kit::grade_in_process(ex, central_differences(ex, h), 11);
      BOOST_TEST(r.score() == 0, name << " h=" << h << " scored " << r.score() << "/" << r.max_score());
      bool named = false;
      for (const kit::GradeRow& row : r.rows) named = named || row.result == "only approximate";
      BOOST_TEST(named, name << " h=" << h << ": no row says 'only approximate'");
    }
  }
}

// Where the forward is affine in an input (matmul_bias in X, W and b; a norm in gamma and beta), a
// difference quotient with a large step is exact up to rounding: no tolerance can tell it from a
// derived gradient there (docs/grading.md says so). Everywhere else no step gets close.
bool affine(const std::string& exercise, const std::string& gradient) {
  return exercise == "matmul_bias" || gradient == "dgamma" || gradient == "dbeta";
}

BOOST_AUTO_TEST_CASE(at_any_step_no_gradient_of_a_nonlinear_input_scores) {
  for (const std::string& name : kNames) {
    const kit::Exercise ex = exercise(name);
    for (double h : {1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8}) {
      const kit::GradeReport r = kit::grade_in_process(ex, central_differences(ex, h), 12);
      for (const kit::GradeRow& row : r.rows) {
        if (!affine(name, row.gradient)) BOOST_TEST(row.points == 0, name << " h=" << h << " " << row.check << " " << row.gradient);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(the_figures_behind_the_tolerance) {
  // The best central differences do at the usual steps, per exercise, against the exact reference.
  for (const std::string& name : kNames) {
    const kit::Exercise ex = exercise(name);
    double best = 1;
    for (double h : {1e-3, 1e-4, 1e-5, 6e-6, 1e-6, 1e-7}) {
      double worst = 0;
      for (const kit::DrawnCase& c : kit::draw_cases(ex, 11)) {
        if (c.on_tape) continue;
        const Mats exact = kit::exact_gradients(ex, c.inputs, c.dy);
        const Mats cd = central_differences(ex, h)(c.sent);
        for (std::size_t k = 0; k < exact.size(); ++k) {
          if (!affine(name, "d" + ex.spec.inputs[k].name)) worst = std::max(worst, relative_error(cd[k], exact[k]));
        }
      }
      best = std::min(best, worst);
    }
    char line[160];
    std::snprintf(line, sizeof line, "%-15s best central differences (h from 1e-3 to 1e-7): %.1e", name.c_str(), best);
    BOOST_TEST_MESSAGE(line);
    if (name != "matmul_bias") BOOST_TEST(best > 1e-13 * 10, name << ": central differences come within 10x of the tolerance");
  }
}
