// Issue 37, item 6: an exercise owns its settings. Its exercise.spec says the tolerance
// (`tolerance = 1e-8`), what each check is worth (`points = dx 3 tape 2`) and which cases the
// student does not see (`hidden = 2`); a spec that says any of them wrongly, names an unknown
// forward or misspells its hints is refused with its file and line, as a DataError (the
// command line's status 2, like any other setup error). Graded in this process.
#define BOOST_TEST_MODULE assignments_settings
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "assignments/kit/grader.h"
#include "assignments/kit/jvp_grader.h"

namespace fs = std::filesystem;

namespace {

using Mats = std::vector<arma::mat>;

fs::path scratch() { return fs::temp_directory_path() / ("ag_settings_" + std::to_string(::getpid())); }

struct Scratch {
  Scratch() { fs::create_directories(scratch()); }
  ~Scratch() { fs::remove_all(scratch()); }
};

// A softmax exercise with the cases "visible 3x4" and "secret 5x6", then `extra` lines.
const std::string kSoftmax = "title = t\nforward = softmax\ninput = x N D -2 2\nsends = y dy\n"
                             "case = visible 3x4 | N=3 D=4\ncase = secret 5x6 | N=5 D=6\n";

// Writes SCRATCH/NAME/exercise.spec and loads it.
kit::Exercise exercise_with(const std::string& name, const std::string& spec) {
  fs::create_directories(scratch() / name);
  std::ofstream(scratch() / name / "exercise.spec") << spec;
  return kit::load_exercise(scratch().string(), name);
}

// The refusal of a spec: its message, which must be a DataError's (status 2 on the command line).
std::string refusal(const std::string& spec) {
  try {
    exercise_with("broken", spec);
  } catch (const ag::DataError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("not a DataError: ") + e.what();
  }
  return "not refused";
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

arma::mat softmax_dx(const arma::mat& y, const arma::mat& dy) { return y % (dy.each_col() - arma::sum(dy % y, 1)); }

// Right to 1e-10 of the gradient: past the default tolerance, within 1e-8.
kit::Answerer nearly_right() {
  return [](const Mats& s) { return Mats{softmax_dx(s[0], s[1]) * (1 + 1e-10)}; };
}

// Right on the 3x4 case (and the tape's), the wrong sign on the 5x6 one.
kit::Answerer wrong_on_secret() {
  return [](const Mats& s) { return Mats{s[0].n_rows == 5 ? arma::mat(-softmax_dx(s[0], s[1])) : softmax_dx(s[0], s[1])}; };
}

std::string table(const kit::GradeReport& r) {
  std::ostringstream os;
  r.print(os);
  return os.str();
}

}  // namespace

BOOST_TEST_GLOBAL_FIXTURE(Scratch);

BOOST_AUTO_TEST_SUITE(tolerance)

BOOST_AUTO_TEST_CASE(the_spec_sets_it_and_the_default_is_1e_13) {
  BOOST_TEST(exercise_with("plain", kSoftmax).spec.tolerance == 1e-13);
  const kit::GradeReport strict = kit::grade_in_process(exercise_with("plain", kSoftmax), nearly_right(), 3);
  BOOST_TEST(strict.score() == 0, table(strict));
  BOOST_TEST(has(table(strict), "the grader wants 1e-13, so derive it"), table(strict));
  const kit::Exercise loose = exercise_with("loose", kSoftmax + "tolerance = 1e-8\n");
  BOOST_TEST(loose.spec.tolerance == 1e-8);
  const kit::GradeReport r = kit::grade_in_process(loose, nearly_right(), 3);
  BOOST_TEST(r.score() == r.max_score(), table(r));
  // A miss past the spec's tolerance names it.
  const kit::Exercise tight = exercise_with("tight", kSoftmax + "tolerance = 1e-11\n");
  const kit::GradeReport off = kit::grade_in_process(
      tight, [](const Mats& s) { return Mats{softmax_dx(s[0], s[1]) * (1 + 1e-9)}; }, 3);
  BOOST_TEST(off.score() == 0, table(off));
  BOOST_TEST(has(table(off), "the grader wants 1e-11, so derive it"), table(off));
}

BOOST_AUTO_TEST_CASE(a_jvp_exercise_takes_it_for_the_transpose_identity) {
  const kit::Exercise ex = exercise_with("jvp", "title = t\nkind = jvp\nforward = softmax\ninput = x N D -2 2\n"
                                                "sends = x\ntape = no\ncase = a | N=3 D=4\n");
  const kit::Answerer nearly = [&ex](const Mats& s) {  // the exact J v, off by 1e-9 of itself
    kit::DrawnCase c;
    c.inputs = {s[0]};
    c.y = ex.forward(c.inputs);
    c.tangents = {s[1]};
    return Mats{kit::exact_jvp(ex, c, 0) * (1 + 1e-9)};
  };
  const kit::GradeReport strict = kit::grade_in_process(ex, nearly, 5);
  BOOST_TEST(strict.score() == 1, table(strict));  // the differences pass, the transpose identity does not
  std::ofstream(scratch() / "jvp" / "exercise.spec", std::ios::app) << "tolerance = 1e-8\n";
  const kit::Exercise loose = kit::load_exercise(scratch().string(), "jvp");
  const kit::GradeReport r = kit::grade_in_process(loose, nearly, 5);
  BOOST_TEST(r.score() == 2, table(r));
}

BOOST_AUTO_TEST_CASE(a_value_that_is_no_tolerance_is_refused_with_its_line) {
  for (const char* value : {"0", "-1e-9", "nan", "inf", "tight", "1e-13 # the default", ""}) {
    const std::string why = refusal(kSoftmax + "tolerance = " + value + "\n");
    BOOST_TEST(has(why, "broken/exercise.spec:7: expected"), value << ": " << why);
    BOOST_TEST(why.find('\n') == std::string::npos, why);
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(points)

BOOST_AUTO_TEST_CASE(each_check_of_a_gradient_is_worth_its_points) {
  const std::string spec = "title = t\nforward = layernorm\neps = 1e-5\ninput = x N D -2 2\ninput = gamma 1 D 0.5 1.5\n"
                           "input = beta 1 D -1 1\nsends = x gamma dy eps\ngiven = dbeta\ncase = a | N=3 D=5\n"
                           "case = b | N=4 D=2\n";
  const kit::Exercise plain = exercise_with("norm", spec);
  const kit::Answerer zeros = [](const Mats& s) {
    return Mats{arma::zeros(arma::size(s[0])), arma::zeros(arma::size(s[1])), arma::zeros(arma::size(s[1]))};
  };
  BOOST_TEST(kit::grade_in_process(plain, zeros, 1).max_score() == 5);  // dx, dgamma twice, the tape: 1 each
  const kit::Exercise weighted = exercise_with("norm", spec + "points = dx 3 tape 2\n");
  const kit::GradeReport r = kit::grade_in_process(weighted, zeros, 1);
  BOOST_TEST(r.max_score() == 3 + 1 + 3 + 1 + 2, table(r));
  for (const kit::GradeRow& row : r.rows) {
    const int want = row.gradient == "dx" ? 3 : row.gradient == "dgamma" ? 1 : row.gradient == "all" ? 2 : 0;
    BOOST_TEST(row.max_points == want, row.check << " " << row.gradient);
  }
  // Right dx and dgamma on case b only: 3 + 1 points.
  const kit::Answerer on_b = [&weighted](const Mats& s) {
    if (s[0].n_rows != 4 || s.size() != 4) return Mats{arma::zeros(arma::size(s[0])), arma::zeros(arma::size(s[1])),
                                                       arma::zeros(arma::size(s[1]))};
    const std::vector<arma::mat> exact = kit::exact_gradients(weighted, {s[0], s[1], arma::zeros(arma::size(s[1]))}, s[2]);
    return exact;
  };
  const kit::GradeReport part = kit::grade_in_process(weighted, on_b, 1);
  BOOST_TEST(part.score() == 4, table(part));
  BOOST_TEST(has(table(part), "3/3"), table(part));
}

BOOST_AUTO_TEST_CASE(points_for_what_is_no_check_are_refused_with_their_line) {
  const std::string norm = "title = t\nforward = layernorm\neps = 1e-5\ninput = x N D -2 2\ninput = gamma 1 D 0.5 1.5\n"
                           "input = beta 1 D -1 1\nsends = x gamma dy eps\ngiven = dbeta\ncase = a | N=3 D=5\n";
  const std::pair<std::string, std::string> refused[] = {
      {"points = dy 2", "points for 'dy', which is no check; the checks are dx, dgamma and tape"},
      {"points = dbeta 2", "points for 'dbeta', which is given (worth no points)"},
      {"points = dx 0", "expected the points of dx to be a whole number from 1 to 100, got '0'"},
      {"points = dx 1.5", "expected the points of dx to be a whole number from 1 to 100, got '1.5'"},
      {"points = dx", "expected 'points = GRADIENT N [GRADIENT N ...]'"},
      {"points = dx two", "expected a number, got 'two'"},
  };
  for (const auto& [line, want] : refused) {
    const std::string why = refusal(norm + line + "\n");
    BOOST_TEST(has(why, "broken/exercise.spec:10: " + want), line << ": " << why);
  }
  const std::string why = refusal(kSoftmax + "tape = no\npoints = tape 2\n");
  BOOST_TEST(has(why, "broken/exercise.spec:8: points for 'tape', which is no check; the checks are dx"), why);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(hidden)

BOOST_AUTO_TEST_CASE(a_hidden_case_counts_but_the_student_sees_only_pass_or_fail) {
  const kit::Exercise ex = exercise_with("hide", kSoftmax + "hidden = 1\n");
  const kit::GradeReport r = kit::grade_in_process(ex, wrong_on_secret(), 2);
  BOOST_TEST(r.score() == 2);  // the visible case and the tape; the hidden case lost its point
  BOOST_TEST(r.max_score() == 3);
  // The instructor's report (the CSV, --format json) keeps every row as it is.
  BOOST_TEST_REQUIRE(r.rows.size() == 3u);
  BOOST_TEST(r.rows[0].hidden == 0);
  BOOST_TEST(r.rows[1].hidden == 1);
  BOOST_TEST(r.rows[1].check == "secret 5x6");
  BOOST_TEST(r.rows[1].result == "wrong sign");
  BOOST_TEST(r.rows[2].hidden == 0);  // the tape check, drawn with the visible first case's sizes
  // The student's: the hidden case is one row, "fail", with no label, diagnosis, hint or points.
  const std::string text = table(r);
  BOOST_TEST(has(text, "hidden case 1"), text);
  BOOST_TEST(has(text, "fail"), text);
  for (const char* secret : {"secret", "5x6", "wrong sign", "hint:", "0/1"}) BOOST_TEST(!has(text, secret), secret << "\n" << text);
  BOOST_TEST(has(text, "visible 3x4"), text);
  BOOST_TEST(has(text, "score: 2/3 (66%)"), text);
  const kit::GradeReport view = r.student_view();
  BOOST_TEST(view.score() == 2);
  BOOST_TEST(view.max_score() == 3);
  BOOST_TEST(view.rows.at(1).check == "hidden case 1");
  BOOST_TEST(view.rows.at(1).result == "fail");
  BOOST_TEST(view.rows.at(1).diagnosis.hint.empty());
  // Right everywhere: "pass".
  const kit::GradeReport right = kit::grade_in_process(ex, [](const Mats& s) { return Mats{softmax_dx(s[0], s[1])}; }, 2);
  BOOST_TEST(has(table(right), "pass"), table(right));
  BOOST_TEST(right.score() == 3);
}

BOOST_AUTO_TEST_CASE(every_case_hidden_hides_the_tape_check_too) {
  const kit::Exercise ex = exercise_with("hide_all", kSoftmax + "hidden = 2\n");
  const kit::GradeReport r = kit::grade_in_process(ex, wrong_on_secret(), 2);
  BOOST_TEST_REQUIRE(r.rows.size() == 3u);
  BOOST_TEST(r.rows[0].hidden == 1);
  BOOST_TEST(r.rows[1].hidden == 2);
  BOOST_TEST(r.rows[2].hidden == 3);  // the tape check, drawn with the first case's sizes
  const std::string text = table(r);
  for (const char* secret : {"visible", "secret", "on the tape"}) BOOST_TEST(!has(text, secret), secret << "\n" << text);
  BOOST_TEST(has(text, "hidden case 3"), text);
}

BOOST_AUTO_TEST_CASE(more_hidden_cases_than_cases_are_refused_with_the_line) {
  BOOST_TEST(has(refusal(kSoftmax + "hidden = 3\n"), "broken/exercise.spec:7: hidden = 3, but the spec has 2 cases"));
  for (const char* value : {"-1", "1.5", "two"}) {
    const std::string why = refusal(kSoftmax + "hidden = " + value + "\n");
    BOOST_TEST(has(why, "broken/exercise.spec:7: expected"), value << ": " << why);
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(refusals)

BOOST_AUTO_TEST_CASE(a_broken_spec_is_a_data_error) {
  // Status 2 on the command line, as an unknown exercise: the grader was set up wrongly.
  const std::string why = refusal(kSoftmax + "kind = backward # the default\n");
  BOOST_TEST(has(why, "broken/exercise.spec:7: expected kind = backward or jvp"), why);
}

BOOST_AUTO_TEST_CASE(an_unknown_forward_names_the_spec_file_and_line) {
  const std::string why = refusal("title = t\nforward = softmaxx\ninput = x N D -2 2\nsends = y dy\ncase = a | N=2 D=3\n");
  BOOST_TEST(has(why, "broken/exercise.spec:2: the op table has no row 'softmaxx'"), why);
  const std::string inputs = refusal("title = t\nforward = matmul\ninput = x N D -2 2\nsends = dy\ncase = a | N=2 D=3\n");
  BOOST_TEST(has(inputs, "broken/exercise.spec:2: the forward 'matmul' takes 2 inputs, the spec lists 1"), inputs);
}

BOOST_AUTO_TEST_CASE(an_unknown_hints_name_is_refused_with_the_known_ones) {
  const std::string why = refusal(kSoftmax + "hints = sofmax\n");
  BOOST_TEST(has(why, "broken/exercise.spec:7: unknown hints 'sofmax' (did you mean softmax?); the hints are layernorm, "
                      "rmsnorm, softmax, cross_entropy, linear, batchnorm, engine"), why);
  const std::string far = refusal(kSoftmax + "hints = groupnorm\n");
  BOOST_TEST(has(far, "unknown hints 'groupnorm'; the hints are layernorm, rmsnorm, softmax, cross_entropy, linear, "
                      "batchnorm, engine"), far);
}

BOOST_AUTO_TEST_SUITE_END()
