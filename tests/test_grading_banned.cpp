// Issue 37: a complex-step "backward" (std::complex, a step of 1e-20i) scored 9/9 on
// LayerNorm on every seed. It is exact to rounding, so no tolerance separates it from a
// derived one: the scorer itself gives it full marks (graded in-process here). Backward
// and JVP exercises therefore ban complex numbers and floats wider than double, as a
// stated policy (assignments/grading/banned.h, docs/grading.md), and `autograd grade`
// refuses such a file before it is built.
#define BOOST_TEST_MODULE grading_banned
#include <boost/test/unit_test.hpp>

#include "assignments/grading/banned.h"
#include "assignments/kit/grader.h"
#include "cli_grade.h"

#include "grading_fixtures/complex_step_layernorm.cpp"

using grading::banned_use;
using namespace cli_grade;

BOOST_TEST_GLOBAL_FIXTURE(Scratch);

namespace {
const std::string kFixture = AUTOGRAD_SOURCE_DIR "/tests/grading_fixtures/complex_step_layernorm.cpp";
}

BOOST_AUTO_TEST_CASE(no_tolerance_catches_the_complex_step) {
  const kit::Exercise ex = kit::load_exercise(AUTOGRAD_SOURCE_DIR "/assignments", "layernorm");
  for (unsigned seed : {1u, 2u, 3u}) {
    const kit::GradeReport r = kit::grade_in_process(
        ex,
        [](const std::vector<arma::mat>& sent) {
          const LayerNormGrads g = layernorm_backward(sent[0], sent[1], sent[2], sent[3](0));
          return std::vector<arma::mat>{g.dx, g.dgamma, g.dbeta};
        },
        seed);
    BOOST_TEST(r.score() == r.max_score(), "seed " << seed);  // why the policy exists
  }
}

BOOST_AUTO_TEST_CASE(autograd_grade_refuses_the_complex_step) {
  const Run r = grade(quote(kFixture));
  BOOST_TEST(r.status == 1, r.out << r.err);
  BOOST_TEST(has(r.out, "uses <complex> (line 6)"), r.out);
  BOOST_TEST(has(r.out, "complex-step derivative is exact"), r.out);
  BOOST_TEST(has(r.out, "score: 0/9"), r.out);
}

BOOST_AUTO_TEST_CASE(each_way_to_write_it_is_named) {
  const std::pair<std::string, std::string> uses[] = {
      {"std::complex<double> z;", "std::complex"},
      {"using namespace std;\ncomplex<double> z;", "complex (line 2)"},
      {"#define C std::comp ## lex\n", "token pasting (##)"},
      {"#define C std::comp %:%: lex\n", "token pasting (%:%:)"},
      {"std::comp\\\nlex<double> z;", "std::complex (line 1)"},
      {"auto h = 1e-20i;", "the imaginary literal 1e-20i"},
      {"auto h = 1'0.5if;", "the imaginary literal 1'0.5if"},
      {"arma::cx_mat z;", "Armadillo's complex type cx_mat"},
      {"auto z = std::polar(1.0, 2.0);", "polar"},
      {"long double x;", "long double"},
      {"double long x;", "long double"},
      {"__float128 x;", "__float128"},
      {"_Complex double z;", "_Complex"},
      {"__complex__ double z;", "__complex__"},
      {"#line 1 \"armadillo\"\n", "a #line directive"},
      {"const char* s = R\"x(\")x\"; std::complex<double> z;", "std::complex"},
      {"int a = 1'000; std::complex<double> z; char c = 'x';", "std::complex"},
  };
  for (const auto& [source, what] : uses) BOOST_TEST(has(banned_use(source), what), source << " -> " << banned_use(source));
}

BOOST_AUTO_TEST_CASE(what_a_derivation_writes_is_not_banned) {
  const std::string allowed[] = {
      "// a std::complex step would be exact: not here\nint complexity = 0;",
      "const char* s = \"std::complex<double>\"; /* long double */",
      "const char* r = R\"(std::complex)\";",
      "unsigned long n = sizeof(long) * double(3);",
      "double x = 1e-5, y = 0x1f, z = 2.5f;",
      "#include <armadillo>\narma::mat dx = arma::sum(dy % y, 1);",
  };
  for (const std::string& source : allowed) BOOST_TEST(banned_use(source).empty(), source << " -> " << banned_use(source));
}
