// Issue 37: a spec that names an unknown forward or misspells its hints is refused with its
// file and line, as a DataError (the command line's status 2, like any other setup error).
#define BOOST_TEST_MODULE assignments_settings
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "assignments/kit/grader.h"

namespace fs = std::filesystem;

namespace {

fs::path scratch() { return fs::temp_directory_path() / ("ag_settings_" + std::to_string(::getpid())); }

struct Scratch {
  Scratch() { fs::create_directories(scratch()); }
  ~Scratch() { fs::remove_all(scratch()); }
};

// A softmax exercise with the cases "visible 3x4" and "secret 5x6".
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

}  // namespace

BOOST_TEST_GLOBAL_FIXTURE(Scratch);

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
                      "rmsnorm, softmax"), why);
  const std::string far = refusal(kSoftmax + "hints = batchnorm\n");
  BOOST_TEST(has(far, "unknown hints 'batchnorm'; the hints are layernorm, rmsnorm, softmax"), far);
}

BOOST_AUTO_TEST_SUITE_END()
