// The options of `autograd train` and `autograd compare` (cli/run_options.h),
// run as a program: each default --help prints is the config's own
// (train/config.h), so a default is written once.
#define BOOST_TEST_MODULE cli_options
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <regex>
#include <string>
#include <vector>

#include "autograd/format.h"
#include "nn/norm.h"
#include "tests/cli_run.h"
#include "train/config.h"

namespace {

// The help with every run of white space as one space (Program_options wraps at 80 columns).
std::string help_of(const std::string& command) {
  const cli_test::Run r = cli_test::run(command + " --help");
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  return std::regex_replace(r.out, std::regex("\\s+"), " ");
}

// The description of --name: from "--name arg" to the next option.
std::string described(const std::string& help, const std::string& name) {
  std::smatch m;
  const std::regex option("--" + name + " arg (.*?)(?= --[a-z-]+ arg | -h \\[)");
  if (!std::regex_search(help, m, option)) return "(no --" + name + " in the help)";
  return m[1];
}

std::string both(const std::string& mlp, const std::string& gpt) {
  return "(default " + mlp + (mlp == gpt ? "" : "; gpt " + gpt) + ")";
}
std::string one(const std::string& value) { return "(default " + value + ")"; }

}  // namespace

BOOST_AUTO_TEST_CASE(train_help_prints_the_defaults_of_mlp_config_and_gpt_config) {
  const std::string help = help_of("train");
  const ag::RunConfig m = ag::mlp_config(), g = ag::gpt_config();
  using ag::format_number;
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"model", one(ag::model_name(m.model))},
      {"dataset", both(m.dataset, g.dataset)},
      {"optimizer", both(ag::optimizer_name(m.optimizer), ag::optimizer_name(g.optimizer))},
      {"lr", both(format_number(m.lr), format_number(g.lr))},
      {"weight-decay", both(format_number(m.weight_decay), format_number(g.weight_decay))},
      {"schedule", both(ag::schedule_name(m.schedule), ag::schedule_name(g.schedule))},
      {"clip", both(format_number(m.clip), format_number(g.clip))},
      {"epochs", both(std::to_string(m.epochs), std::to_string(g.epochs))},
      {"batch-size", both(std::to_string(m.batch_size), std::to_string(g.batch_size))},
      {"seed", both(std::to_string(m.seed), std::to_string(g.seed))},
      {"validation", both(format_number(m.validation_fraction), format_number(g.validation_fraction))},
      {"threads", both(std::to_string(m.threads), std::to_string(g.threads))},
      {"norm", both(ag::norm_name(m.norm), ag::norm_name(g.norm))},
      {"impl", both(ag::impl_name(m.impl), ag::impl_name(g.impl))},
      {"hidden", one(std::to_string(m.hidden.at(0)) + "," + std::to_string(m.hidden.at(1)))},
      {"activation", one(ag::activation_name(m.activation))},
      {"momentum", one(format_number(m.momentum))},
      {"norm-placement", both(ag::placement_name(m.placement), ag::placement_name(g.placement))},
      {"layers", one(std::to_string(g.layers))},
      {"heads", one(std::to_string(g.heads))},
      {"width", one(std::to_string(g.width))},
      {"context", one(std::to_string(g.context))},
      {"dropout", one(format_number(g.dropout))},
      {"warmup", one(std::to_string(g.warmup))},
  };
  for (const auto& [name, defaults] : expected) {
    const std::string text = described(help, name);
    BOOST_TEST(cli_test::has(text, defaults), "--" << name << ": expected " << defaults << " in '" << text << "'");
  }
}

BOOST_AUTO_TEST_CASE(a_kind_name_is_parsed_once_and_a_bad_one_is_the_usage_line) {
  // train/ and nn/ parse the names (ag::ConfigError, ag::Error); the command line prints their message, exit 2.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"train --model rnn", "--model 'rnn' is not one of mlp, gpt"},
      {"train --optimizer rmsprop", "--optimizer 'rmsprop' is not one of sgd, adam, adamw"},
      {"train --schedule linear", "unknown schedule 'linear'"},
      {"train --activation sigmoid", "unknown activation 'sigmoid'"},
      {"train --impl fast", "unknown implementation 'fast'"},
      {"compare --impl composed,fast", "unknown implementation 'fast'"},
      {"compare --model gpt --norm-placement pre,middle", "unknown norm placement 'middle'"},
  };
  for (const auto& [args, expect] : cases) {
    const cli_test::Run r = cli_test::run(args + " --out /nonexistent/never");
    BOOST_TEST(r.status == 2, args);
    BOOST_TEST(cli_test::has(r.err, expect), args << " -> " << r.err);
    BOOST_TEST(std::count(r.err.begin(), r.err.end(), '\n') == 1, args << " -> " << r.err);
  }
}
