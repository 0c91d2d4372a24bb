// The training page's engine (page/playground/): its settings, their messages,
// a default run that learns, a diverging run that names where, and the same
// run through `autograd train` (the command the page prints) giving the same loss.
#define BOOST_TEST_MODULE playground
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <filesystem>
#include <regex>

#include "page/playground/session.h"
#include "tests/cli_run.h"

namespace {

std::string message_of(const std::string& hash) {
  try {
    playground::parse_settings(hash);
  } catch (const playground::SettingsError& e) {
    return e.what();
  }
  return "(no error)";
}

// The number after "train loss " in `autograd train`'s last lines.
double printed_train_loss(const std::string& out) {
  std::smatch m;
  BOOST_REQUIRE_MESSAGE(std::regex_search(out, m, std::regex("train loss ([-0-9.e+]+) \\(the whole training set\\)")), out);
  return std::stod(m[1]);
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_2d_datasets_have_their_size_and_two_balanced_classes) {
  for (const char* name : {"moons", "circles", "spiral", "xor", "blobs"}) {
    const ag::Dataset d = ag::make_generated(name, 7, {200, 0.1});
    BOOST_TEST(d.size() == 200u, name);
    BOOST_TEST(d.features() == 2u, name);
    BOOST_TEST(d.classes == 2u, name);
    if (std::string(name) != "xor") BOOST_TEST(arma::accu(d.labels() == 1) == 100u, name);
    const ag::Dataset again = ag::make_generated(name, 7, {200, 0.1}), other = ag::make_generated(name, 8, {200, 0.1});
    BOOST_TEST(arma::approx_equal(d.x, again.x, "absdiff", 0.0), name);
    BOOST_TEST(!arma::approx_equal(d.x, other.x, "absdiff", 0.0), name);
  }
  // More noise, the same seed: the points move, the labels stay.
  const ag::Dataset quiet = ag::make_generated("blobs", 1, {100, 0.0}), loud = ag::make_generated("blobs", 1, {100, 1.0});
  BOOST_TEST(arma::stddev(arma::vectorise(loud.x)) > arma::stddev(arma::vectorise(quiet.x)));
  BOOST_TEST(arma::approx_equal(loud.y, quiet.y, "absdiff", 0.0));
}

BOOST_AUTO_TEST_CASE(bad_settings_get_one_line_naming_the_key) {
  BOOST_TEST(message_of("width=0") == "width must be from 1 to 256, got 0");
  BOOST_TEST(message_of("lr=NaN") == "lr must be a number from 1e-05 to 10, got 'NaN'");
  BOOST_TEST(message_of("depth=1000") == "depth must be from 0 to 16, got 1000");
  BOOST_TEST(message_of("points=1000000") == "points must be from 4 to 2000, got 1000000");
  BOOST_TEST(message_of("dataset=mnist") == "dataset 'mnist' is not one of moons, circles, spiral, xor or blobs");
  BOOST_TEST(message_of("#nrom=layernorm").rfind("unknown setting 'nrom' (the settings are dataset, points,", 0) == 0);
  BOOST_TEST(message_of("norm=batchnorm&impl=fused") == "impl fused: batchnorm has one implementation, composed");
  BOOST_TEST(message_of("depth=2.5") == "depth must be a whole number from 0 to 16, got '2.5'");
  BOOST_TEST(message_of("lr") == "lr needs a value (lr=...)");
  BOOST_TEST(message_of("dataset=spiral&norm=layernorm&lr=0.03&steps=5") == "(no error)");
  // The page sees them as JSON, never as a crash.
  BOOST_TEST(playground::start("width=0") == "{\"error\":\"width must be from 1 to 256, got 0\"}");
}

BOOST_AUTO_TEST_CASE(the_command_line_says_every_setting) {
  const playground::Settings s = playground::parse_settings("norm=layernorm&depth=3&width=8&optimizer=momentum&lr=0.3");
  BOOST_TEST(playground::command_line(s, 40) ==
             "autograd train --dataset moons --points 200 --noise 0.1 --validation 0.2 --hidden 8,8,8 --activation tanh "
             "--norm layernorm --impl composed --norm-placement pre --optimizer sgd --momentum 0.9 --lr 0.3 --weight-decay 0 "
             "--batch-size 32 --init-scale 1 --seed 0 --steps 40");
  const playground::Settings post = playground::parse_settings("norm=rmsnorm&placement=post");
  BOOST_TEST(playground::command_line(post, 5).find("--norm rmsnorm --impl composed --norm-placement post ") != std::string::npos);
  BOOST_TEST(playground::shortest(0.1) == "0.1");
  BOOST_TEST(std::stod(playground::shortest(std::pow(10, -2.3))) == std::pow(10, -2.3));
  const std::string schema = playground::settings_json();
  for (const char* key : {"\"dataset\"", "\"norm\"", "\"depth\"", "\"width\"", "\"lr\"", "\"seed\"", "\"steps\""}) {
    BOOST_TEST(schema.find(key) != std::string::npos, key);
  }
}

BOOST_AUTO_TEST_CASE(the_default_run_learns_moons) {
  playground::Session s(playground::parse_settings("steps=300"));
  const double before = s.train_evaluation().loss;
  s.advance(1000);
  BOOST_TEST(s.step() == 300);
  BOOST_TEST(s.done());
  BOOST_TEST(s.train_evaluation().loss < 0.5 * before);
  BOOST_TEST(s.validation_evaluation().accuracy >= 0.9);
  const std::vector<playground::LayerStats> layers = s.layer_stats();
  BOOST_TEST(layers.size() == 3u);  // 2 hidden and the output
  for (const playground::LayerStats& l : layers) {
    BOOST_TEST(l.grad_norm > 0, l.name);
    BOOST_TEST(l.update_ratio > 0, l.name);
    BOOST_TEST(l.update_ratio < 1, l.name);
  }
  // One step's tape: the fused LayerNorm is one node where the composed one is eight.
  playground::Session ln(playground::parse_settings("norm=layernorm"));
  const std::string tape = ln.tape_json();
  std::smatch m;
  BOOST_REQUIRE(std::regex_search(tape, m, std::regex(R"(\{"composed":\{"nodes":(\d+),"saved_bytes":\d+\},"fused":\{"nodes":(\d+),)")));
  BOOST_TEST(std::stoi(m[1]) - std::stoi(m[2]) == 2 * 7, tape);  // 2 hidden layers
  BOOST_TEST(playground::start("").find("\"step\":0,") != std::string::npos);
  const arma::mat p = s.boundary();
  BOOST_TEST(p.n_elem == static_cast<arma::uword>(playground::kGrid * playground::kGrid));
  BOOST_TEST(p.min() < 0.1);
  BOOST_TEST(p.max() > 0.9);
}

BOOST_AUTO_TEST_CASE(a_diverging_run_stops_and_names_the_step_and_the_layer) {
  playground::Session s(playground::parse_settings("optimizer=sgd&lr=10&init=100&depth=4&width=32&activation=relu"));
  s.advance(200);
  BOOST_TEST(s.done());
  BOOST_TEST(s.step() < 200);
  const std::string& m = s.diverged();
  BOOST_TEST(m.rfind("diverged at step " + std::to_string(s.step()) + ": ", 0) == 0, m);
  BOOST_TEST(m.find("layer") != std::string::npos, m);
}

// The page's run and `autograd train` with the page's command: the same loss to
// 1e-12 here (the same machine); the browser test compares the WebAssembly build.
BOOST_AUTO_TEST_CASE(the_command_reproduces_the_run) {
  for (const char* hash : {"steps=60", "norm=layernorm&impl=composed&steps=60&lr=0.03", "norm=batchnorm&steps=60&optimizer=momentum&lr=0.1",
                           "dataset=spiral&norm=rmsnorm&impl=fused&activation=relu&steps=45&batch=50&init=0.5"}) {
    const playground::Settings settings = playground::parse_settings(hash);
    playground::Session s(settings);
    s.advance(1000);
    const std::string command = playground::command_line(settings, s.step());
    const std::filesystem::path out = std::filesystem::temp_directory_path() / ("playground-" + std::to_string(::getpid()));
    const cli_test::Run run = cli_test::run(command.substr(std::string("autograd ").size()) + " --out " + cli_test::quote(out.string()),
                                            "OPENBLAS_NUM_THREADS=1");
    std::filesystem::remove_all(out);
    BOOST_REQUIRE_MESSAGE(run.status == 0, command + "\n" + run.err);
    BOOST_TEST(std::abs(printed_train_loss(run.out) - s.train_evaluation().loss) < 1e-10, hash);
  }
}
