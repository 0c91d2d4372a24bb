// Issue 37, item 9: the two exercises docs/writing-exercises.md adds, graded in this process.
// gelu is the op table's `gelu`; attention_scores (S = Q K^T / sqrt(d)) is an op the table lacks,
// graded through its `matmul` by the exercise's own adapter, which this file builds in (the real
// adapter.cpp, not a copy), so a wrong change of variables there fails the reference solution.
// Each exercise's stub scores 0, its solution full marks on fresh seeds, and its usual mistakes
// lose marks with the diagnosis the statement promises. (CTest's assignment_gelu_stub and
// assignment_gelu_solution grade the same files with the built `autograd`.)
#define BOOST_TEST_MODULE assignments_gelu_attention
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "assignments/kit/grader.h"
#include "autograd/gradcheck.h"

// The adapter calls attention_scores_backward: here, whichever attempt a test sets.
#define attention_scores_backward attention_scores_attempt
#include "../assignments/attention_scores/adapter.cpp"
#undef attention_scores_backward

#define attention_scores_backward attention_scores_stub
#include "../assignments/attention_scores/attention_scores.cpp"
#undef attention_scores_backward
#define gelu_backward gelu_backward_stub
#include "../assignments/gelu/gelu.cpp"
#undef gelu_backward

#if __has_include("../assignments/solutions/gelu.cpp") && __has_include("../assignments/solutions/attention_scores.cpp")
#define HAVE_SOLUTIONS 1
#define attention_scores_backward attention_scores_backward_ref
#include "../assignments/solutions/attention_scores.cpp"
#undef attention_scores_backward
#define gelu_backward gelu_backward_ref
#include "../assignments/solutions/gelu.cpp"
#undef gelu_backward
#endif

namespace {

using Mats = std::vector<arma::mat>;
using AttentionBackward = std::function<AttentionScoresGrads(const arma::mat&, const arma::mat&, const arma::mat&)>;

AttentionBackward attempt;  // what the adapter calls

kit::Exercise exercise(const std::string& name) { return kit::load_exercise(AUTOGRAD_SOURCE_DIR "/assignments", name); }

std::string table(const kit::GradeReport& r) {
  std::ostringstream os;
  r.print(os);
  return os.str();
}

// The attention exercise as the child answers it: the sent Q, Kt, dy through adapter.cpp.
kit::GradeReport graded_attention(const AttentionBackward& backward, unsigned seed) {
  attempt = backward;
  return kit::grade_in_process(exercise("attention_scores"), kit_child::answer, seed);
}

using GeluBackward = std::function<arma::mat(const arma::mat& x, const arma::mat& dy)>;

kit::GradeReport graded_gelu(const GeluBackward& backward, unsigned seed) {
  return kit::grade_in_process(exercise("gelu"), [&](const Mats& s) { return Mats{backward(s[0], s[1])}; }, seed);
}

// Some row lost its points with a result that starts with `result` (and, if given, a hint containing `hint`).
bool named(const kit::GradeReport& r, const std::string& result, const std::string& hint = "") {
  for (const kit::GradeRow& row : r.rows) {
    const std::string text = row.note.empty() ? row.diagnosis.hint : row.note;
    if (row.points < row.max_points && row.result.rfind(result, 0) == 0 && text.find(hint) != std::string::npos) {
      return true;
    }
  }
  return false;
}

// GELU's slope, tanh approximation, with switches for the usual mistakes.
struct GeluAttempt {
  bool no_half = false, no_inner = false, no_dy = false, sign = false, exact_gelu = false;
  arma::mat operator()(const arma::mat& x, const arma::mat& dy) const {
    const double c = std::sqrt(2.0 / M_PI), a = 0.044715;
    arma::mat slope;
    if (exact_gelu) {  // the derivative of x Phi(x), the erf GELU: a different function
      slope = 0.5 * (1 + arma::erf(x / std::sqrt(2.0))) + x % arma::exp(-arma::square(x) / 2) / std::sqrt(2 * M_PI);
    } else {
      const arma::mat t = arma::tanh(c * (x + a * arma::pow(x, 3)));
      const arma::mat du = no_inner ? arma::mat(arma::size(x), arma::fill::value(c)) : arma::mat(c * (1 + 3 * a * arma::square(x)));
      slope = (no_half ? 1.0 : 0.5) * ((1 + t) + x % (1 - arma::square(t)) % du);
    }
    const arma::mat dx = no_dy ? slope : arma::mat(dy % slope);
    return sign ? arma::mat(-dx) : dx;
  }
};

GeluAttempt gelu_with(bool GeluAttempt::*flag) {
  GeluAttempt a;
  a.*flag = true;
  return a;
}

}  // namespace

// The adapter's attempt, declared by the header under the name the #define gave it.
AttentionScoresGrads attention_scores_attempt(const arma::mat& Q, const arma::mat& K, const arma::mat& dS) {
  return attempt(Q, K, dS);
}

BOOST_AUTO_TEST_SUITE(specs)

BOOST_AUTO_TEST_CASE(both_exercises_are_found_and_read_as_written) {
  const std::vector<std::string> names = kit::exercise_names(AUTOGRAD_SOURCE_DIR "/assignments");
  for (const char* n : {"gelu", "attention_scores"}) {
    BOOST_TEST((std::find(names.begin(), names.end(), n) != names.end()), n);
  }
  const kit::Exercise gelu = exercise("gelu");
  BOOST_TEST(gelu.spec.forward == "gelu");
  BOOST_TEST(kit::draw_cases(gelu, 1).size() == 5u);  // four cases and the tape
  const kit::Exercise att = exercise("attention_scores");
  BOOST_TEST(att.spec.forward == "matmul");
  for (const kit::DrawnCase& c : kit::draw_cases(att, 1)) {
    BOOST_TEST(arma::approx_equal(c.y, c.inputs[0] * c.inputs[1], "absdiff", 1e-13));  // y = Q Kt
  }
}

// docs/writing-exercises.md quotes these files whole: a change to one that the guide misses fails here.
BOOST_AUTO_TEST_CASE(the_guide_quotes_the_files_as_they_are) {
  auto slurp = [](const std::string& path) {
    std::ifstream in(AUTOGRAD_SOURCE_DIR "/" + path);
    BOOST_TEST_REQUIRE(in.good(), path);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  const std::string guide = slurp("docs/writing-exercises.md");
  for (const char* file : {"assignments/gelu/exercise.spec", "assignments/gelu/adapter.cpp",
                           "assignments/attention_scores/exercise.spec", "assignments/attention_scores/adapter.cpp"}) {
    BOOST_TEST(guide.find("\n" + slurp(file) + "```\n") != std::string::npos, "docs/writing-exercises.md does not quote " << file);
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(stubs_and_solutions)

BOOST_AUTO_TEST_CASE(the_stubs_score_zero) {
  const kit::GradeReport g = graded_gelu(gelu_backward_stub, 4);
  BOOST_TEST(g.score() == 0, table(g));
  BOOST_TEST(g.max_score() == 5);
  const kit::GradeReport a = graded_attention(attention_scores_stub, 4);
  BOOST_TEST(a.score() == 0, table(a));
  BOOST_TEST(a.max_score() == 9);  // dQ and dKt in four cases, and the tape
}

#ifdef HAVE_SOLUTIONS
BOOST_AUTO_TEST_CASE(the_reference_solutions_get_full_marks_on_fresh_seeds) {
  for (unsigned seed : {1u, 77u, 4242u, 20261203u}) {
    const kit::GradeReport g = graded_gelu(gelu_backward_ref, seed);
    BOOST_TEST(g.percent() == 100, table(g));
    const kit::GradeReport a = graded_attention(attention_scores_backward_ref, seed);
    BOOST_TEST(a.percent() == 100, table(a));
  }
}
#endif

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(gelu_mistakes)

BOOST_AUTO_TEST_CASE(the_correct_attempt_gets_full_marks) {
  const kit::GradeReport r = graded_gelu(GeluAttempt{}, 5);
  BOOST_TEST(r.percent() == 100, table(r));
}

BOOST_AUTO_TEST_CASE(each_mistake_loses_marks_with_the_diagnosis_the_statement_names) {
  struct Entry {
    const char* mistake;
    GeluAttempt attempt;
    std::string result, hint;
  };
  const std::vector<Entry> zoo = {
      {"the 0.5 dropped", gelu_with(&GeluAttempt::no_half), "constant factor 2", "counted twice"},
      {"sign flipped", gelu_with(&GeluAttempt::sign), "wrong sign", ""},
      {"du/dx without 3 * 0.044715 x^2", gelu_with(&GeluAttempt::no_inner), "", ""},
      {"dy left out (the slope alone)", gelu_with(&GeluAttempt::no_dy), "", ""},
      {"the erf GELU's derivative", gelu_with(&GeluAttempt::exact_gelu), "", ""},
  };
  for (const Entry& z : zoo) {
    for (unsigned seed : {3u, 91u, 20261203u}) {
      const kit::GradeReport r = graded_gelu(z.attempt, seed);
      BOOST_TEST(r.score() == 0, z.mistake << ":\n" << table(r));
      BOOST_TEST(named(r, z.result, z.hint), z.mistake << ": expected '" << z.result << "' in\n" << table(r));
    }
  }
}

// The cheat of issue 25 on GELU: central differences of the forward, at the usual steps.
BOOST_AUTO_TEST_CASE(central_differences_score_nothing) {
  const kit::Exercise ex = exercise("gelu");
  for (double h : {1e-3, 1e-4, 1e-5, 1e-6}) {
    const kit::GradeReport r = kit::grade_in_process(
        ex,
        [&](const Mats& s) {
          return Mats{ag::numeric_gradient([&](const ag::Inputs& x) { return arma::accu(ex.forward(x) % s[1]); },
                                           {s[0]}, 0, h)};
        },
        11);
    BOOST_TEST(r.score() == 0, "h=" << h << ":\n" << table(r));
    BOOST_TEST(named(r, "only approximate", "derive it"), "h=" << h << ":\n" << table(r));
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(attention_mistakes)

BOOST_AUTO_TEST_CASE(each_mistake_loses_marks_with_the_diagnosis_the_statement_names) {
  auto backward = [](double scale_power, bool transpose_ds, bool transpose_dk, double sign) {
    return [=](const arma::mat& Q, const arma::mat& K, const arma::mat& dS) {
      const double scale = sign * std::pow(double(Q.n_cols), -scale_power);
      AttentionScoresGrads g;
      g.dQ = scale * dS * K;
      g.dK = transpose_ds ? arma::mat(scale * dS * Q) : arma::mat(scale * dS.t() * Q);
      if (transpose_dk) g.dK = arma::mat(g.dK.t());
      return g;
    };
  };
  struct Entry {
    const char* mistake;
    AttentionBackward attempt;
    std::string result, hint;
  };
  const std::vector<Entry> zoo = {
      {"the scale left out", backward(0, false, false, 1), "constant factor 2.236", ""},  // sqrt(5), case 1
      {"1/d for 1/sqrt(d)", backward(1, false, false, 1), "constant factor", ""},
      {"sign flipped", backward(0.5, false, false, -1), "wrong sign", ""},
      {"dK transposed", backward(0.5, false, true, 1), "threw", "(yours is transposed"},
      {"dK transposed, where M = d", backward(0.5, false, true, 1), "transposed", ""},
      {"dS not transposed in dK", backward(0.5, true, false, 1), "threw", "incompatible matrix dimensions"},  // dS Q, N != M
  };
  for (const Entry& z : zoo) {
    for (unsigned seed : {3u, 91u, 20261203u}) {
      const kit::GradeReport r = graded_attention(z.attempt, seed);
      BOOST_TEST(r.percent() < 100, z.mistake << ":\n" << table(r));
      BOOST_TEST(named(r, z.result, z.hint), z.mistake << ": expected '" << z.result << "' with '" << z.hint
                                                        << "' in\n" << table(r));
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
