// Issue 37: a Gradescope prototype needed two grader runs per submission,
// because one file printed no machine-readable result and a class printed no
// readable report. --format writes, from the one run, the document a course
// platform reads: read back here as the platform would (a strict JSON reader,
// an XML parser), for a right, a wrong and a non-compiling submission.
#define BOOST_TEST_MODULE cli_grade_formats
#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>
#include <boost/test/unit_test.hpp>

#include <set>
#include <sstream>

#include "cli_grade.h"
#include "json_read.h"

using namespace cli_grade;
using json_read::Value;

BOOST_TEST_GLOBAL_FIXTURE(Scratch);

namespace {

const std::string& expected_sandbox() {
  static const std::string label = !bwrap_starts()                ? "none (NOT isolated: --sandbox none" + totals_note() + ")"
                                   : grading::totals_available() ? "bwrap"
                                                                 : "bwrap (totals NOT bounded)";
  return label;
}

// A class of three: right, wrong, and one that does not compile.
fs::path three_submissions() {
  const fs::path dir = scratch() / "class";
  if (!fs::exists(dir)) {
    fs::create_directories(dir);
    std::ofstream(dir / "a_right.cpp") << kHead << kRight;
    std::ofstream(dir / "b_wrong.cpp") << kHead << kWrong;
    std::ofstream(dir / "c_broken.cpp") << kHead << kBroken;
  }
  return dir;
}

Run grade_class(const std::string& format) {
  return grade("--class " + quote(three_submissions().string()) + " --exercise softmax --jobs 2 --format " + format);
}

Value parsed(const Run& r) {
  BOOST_TEST_REQUIRE(r.status == 0, r.out << r.err);
  try {
    return json_read::parse(r.out);
  } catch (const std::exception& e) {
    BOOST_FAIL("not JSON: " << e.what() << "\n" << r.out);
  }
  return {};
}

bool is(const Value& v, const std::string& key, Value::Type type) { return v.has(key) && v.at(key).type == type; }

// Gradescope's results.json: the fields its documentation lists, with their types and values.
void expect_gradescope(const Value& doc, double score, bool all_passed) {
  for (const char* key : {"score", "execution_time"}) BOOST_TEST(is(doc, key, Value::Number), key);
  for (const char* key : {"output", "output_format", "visibility"}) BOOST_TEST(is(doc, key, Value::String), key);
  BOOST_TEST(doc.at("output_format").text == "text");
  BOOST_TEST(doc.at("score").number == score);
  BOOST_TEST(is(doc.at("extra_data"), "seed", Value::Number));
  BOOST_TEST(doc.at("extra_data").at("sandbox").text == expected_sandbox());
  BOOST_TEST(has(doc.at("output").text, "inputs drawn with seed"));
  BOOST_TEST_REQUIRE(is(doc, "tests", Value::Array));
  BOOST_TEST(doc.at("tests").items.size() == 5u);
  double sum = 0, max = 0;
  for (const Value& t : doc.at("tests").items) {
    for (const char* key : {"score", "max_score"}) BOOST_TEST(is(t, key, Value::Number), key);
    for (const char* key : {"name", "status", "output", "visibility"}) BOOST_TEST(is(t, key, Value::String), key);
    BOOST_TEST((t.at("status").text == "passed" || t.at("status").text == "failed"));
    BOOST_TEST(t.at("visibility").text == "visible");
    BOOST_TEST((t.at("status").text == "passed") == all_passed);
    sum += t.at("score").number;
    max += t.at("max_score").number;
  }
  BOOST_TEST(sum == score);
  BOOST_TEST(max == 5);
}

}  // namespace

BOOST_AUTO_TEST_CASE(gradescope_results_for_one_file_from_one_run) {
  const Value right = parsed(grade("--format gradescope " + quote(write("right.cpp", kHead + kRight).string())));
  expect_gradescope(right, 5, true);
  const Value wrong = parsed(grade("--format gradescope " + quote(write("wrong.cpp", kHead + kWrong).string())));
  expect_gradescope(wrong, 0, false);
  BOOST_TEST(has(wrong.at("tests").items.at(0).at("output").text, "hint: "));
  const Value broken = parsed(grade("--format gradescope " + quote(write("broken.cpp", kHead + kBroken).string())));
  expect_gradescope(broken, 0, false);
  BOOST_TEST(has(broken.at("output").text, "error: expected primary-expression"), broken.at("output").text);
  BOOST_TEST(broken.at("extra_data").at("status").text == "does not compile");
}

// Issue 37, item 6: an exercise's own points and hidden cases (`points = dx 2 tape 3`,
// `hidden = 1`). The student's document (Gradescope's, whose output is the text report) shows
// the hidden case only as "hidden case 1", failed, with no label, result or hint; the
// instructor's (json) keeps all of them. Both score it with the spec's points.
BOOST_AUTO_TEST_CASE(hidden_cases_and_points_as_the_spec_says) {
  const fs::path data = scratch() / "data" / "assignments";
  const fs::path source = fs::path(AUTOGRAD_SOURCE_DIR) / "assignments";
  fs::create_directories(data / "kit");
  for (const char* f : {"child.h", "child_main.cpp"}) fs::copy_file(source / "kit" / f, data / "kit" / f);
  fs::copy(source / "softmax", data / "softmax");
  std::ofstream(data / "softmax" / "exercise.spec", std::ios::app) << "hidden = 1\npoints = dx 2 tape 3\n";
  const std::string env = "AUTOGRAD_DATA_DIR=" + quote(data.parent_path().string());
  const std::string file = quote(write("hidden_wrong.cpp", kHead + kWrong).string());
  const Value student = parsed(grade("--seed 5 --format gradescope " + file, env));
  BOOST_TEST(student.at("extra_data").at("max_score").number == 4 * 2 + 3);
  const std::vector<Value>& tests = student.at("tests").items;
  BOOST_TEST_REQUIRE(tests.size() == 5u);
  BOOST_TEST(tests[0].at("max_score").number == 2);
  BOOST_TEST(tests[3].at("name").text == "hidden case 1");
  BOOST_TEST(tests[3].at("output").text == "fail");
  BOOST_TEST(tests[3].at("status").text == "failed");
  BOOST_TEST(tests[3].at("max_score").number == 2);
  BOOST_TEST(tests[4].at("max_score").number == 3);  // the tape check
  const std::string& text = student.at("output").text;
  BOOST_TEST(has(text, "hidden case 1"), text);
  BOOST_TEST(!has(text, "large logits"), text);
  BOOST_TEST(has(text, "score: 0/11 (0%)"), text);
  const Value teacher = parsed(grade("--seed 5 --format json " + file, env));
  BOOST_TEST(teacher.at("max_score").number == 11);
  const std::vector<Value>& checks = teacher.at("checks").items;
  BOOST_TEST_REQUIRE(checks.size() == 5u);
  BOOST_TEST(checks[3].at("name").text == "large logits 3x4");
  BOOST_TEST(checks[3].at("hidden_case").number == 1);
  BOOST_TEST(checks[3].at("result").text == "missing sum term");
  BOOST_TEST(!checks[3].at("hint").text.empty());
  BOOST_TEST(checks[0].at("hidden_case").number == 0);
}

BOOST_AUTO_TEST_CASE(prairielearn_results_for_a_class) {
  const Value doc = parsed(grade_class("prairielearn"));
  BOOST_TEST(doc.at("sandbox").text == expected_sandbox());
  BOOST_TEST_REQUIRE(doc.at("submissions").items.size() == 3u);
  const double expected_score[] = {1, 0, 0};
  const bool expected_gradable[] = {true, true, false};
  for (std::size_t i = 0; i < 3; ++i) {
    const Value& result = doc.at("submissions").items[i].at("result");
    BOOST_TEST(is(result, "gradable", Value::Bool));
    BOOST_TEST(result.at("gradable").boolean == expected_gradable[i], i);
    BOOST_TEST_REQUIRE(is(result, "score", Value::Number));
    BOOST_TEST(result.at("score").number == expected_score[i], i);
    BOOST_TEST(is(result, "message", Value::String));
    BOOST_TEST(is(result, "output", Value::String));
    BOOST_TEST_REQUIRE(is(result, "tests", Value::Array));
    for (const Value& t : result.at("tests").items) {
      BOOST_TEST(is(t, "name", Value::String));
      BOOST_TEST(is(t, "points", Value::Number));
      BOOST_TEST(is(t, "max_points", Value::Number));
    }
  }
  BOOST_TEST(doc.at("submissions").items[0].at("file").text == "a_right.cpp");
}

BOOST_AUTO_TEST_CASE(json_for_a_class) {
  const Run r = grade_class("json");
  const Value doc = parsed(r);
  BOOST_TEST(has(r.err, "[3/3]"), r.err);  // the progress went to stderr
  const char* statuses[] = {"graded", "graded", "does not compile"};
  const int scores[] = {5, 0, 0};
  BOOST_TEST_REQUIRE(doc.at("submissions").items.size() == 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    const Value& g = doc.at("submissions").items[i].at("result");
    BOOST_TEST(g.at("status").text == statuses[i]);
    BOOST_TEST(g.at("score").number == scores[i]);
    BOOST_TEST(g.at("max_score").number == 5);
    BOOST_TEST(is(g, "seed", Value::Number));
    BOOST_TEST(g.at("sandbox").text == expected_sandbox());
    BOOST_TEST(g.at("checks").items.size() == 5u);
  }
  BOOST_TEST(has(doc.at("submissions").items[2].at("result").at("compiler_output").text, "error:"));
  BOOST_TEST(!doc.at("submissions").items[1].at("result").at("hints").items.empty());
}

BOOST_AUTO_TEST_CASE(junit_for_a_class) {
  const Run r = grade_class("junit");
  BOOST_TEST_REQUIRE(r.status == 0, r.out << r.err);
  namespace pt = boost::property_tree;
  pt::ptree xml;
  std::istringstream in(r.out);
  BOOST_REQUIRE_NO_THROW(pt::read_xml(in, xml));
  std::vector<const pt::ptree*> suites;
  for (const auto& [tag, node] : xml.get_child("testsuites")) {
    if (tag == "testsuite") suites.push_back(&node);
  }
  BOOST_TEST_REQUIRE(suites.size() == 3u);
  const int failures[] = {0, 5, 0}, errors[] = {0, 0, 5};
  for (std::size_t i = 0; i < 3; ++i) {
    BOOST_TEST(suites[i]->get<int>("<xmlattr>.tests") == 5);
    BOOST_TEST(suites[i]->get<int>("<xmlattr>.failures") == failures[i], i);
    BOOST_TEST(suites[i]->get<int>("<xmlattr>.errors") == errors[i], i);
    std::set<std::string> properties;
    for (const auto& [tag, p] : suites[i]->get_child("properties")) properties.insert(p.get<std::string>("<xmlattr>.name"));
    BOOST_TEST(properties.count("seed") == 1u);
    BOOST_TEST(properties.count("sandbox") == 1u);
  }
  BOOST_TEST(xml.get<int>("testsuites.<xmlattr>.tests") == 15);
}

BOOST_AUTO_TEST_CASE(an_unknown_format_is_bad_usage) {
  const Run r = grade("--format yaml " + quote(write("right.cpp", kHead + kRight).string()));
  BOOST_TEST(r.status == 2, r.out << r.err);
  BOOST_TEST(has(r.err, "--format must be text, json, gradescope, prairielearn or junit, got 'yaml'"), r.err);
}
