#include <cmath>
#include <iostream>

#include "autograd/format.h"
#include "cli/cli.h"

namespace cli {

bool store_options(const std::string& command, const std::string& summary,
                   po::options_description& options, const std::vector<std::string>& args,
                   po::variables_map& vm, const po::positional_options_description* positional) {
  options.add_options()("help,h", "show this help");
  // A stray word after the declared positional arguments lands in a hidden
  // option, so the error can quote it (Boost's own says only "too many
  // positional options").
  const char* const stray = "unexpected-argument";
  po::options_description all;
  all.add(options).add_options()(stray, po::value<std::vector<std::string>>());
  po::positional_options_description words;
  const unsigned declared = positional != nullptr ? positional->max_total_count() : 0;
  for (unsigned i = 0; i < declared; ++i) words.add(positional->name_for_position(i).c_str(), 1);
  words.add(stray, -1);
  po::command_line_parser parser(args);
  parser.options(all).positional(words);
  po::store(parser.run(), vm);
  if (vm.count("help")) {
    std::cout << "usage: autograd " << command << " [options]\n" << summary << "\n\n" << options;
    return false;
  }
  if (vm.count(stray)) {
    throw UsageError("unexpected argument '" + vm[stray].as<std::vector<std::string>>().front() +
                     "' (options start with --; autograd " + command + " --help lists them)");
  }
  return true;
}

bool parse_options(const std::string& command, const std::string& summary,
                   po::options_description& options, const std::vector<std::string>& args,
                   po::variables_map& vm, const po::positional_options_description* positional) {
  if (!store_options(command, summary, options, args, vm, positional)) return false;
  po::notify(vm);
  return true;
}

long long require_positive(const std::string& option, long long value) {
  if (value < 1) throw UsageError("--" + option + " must be 1 or more, got " + std::to_string(value));
  return value;
}

long long require_non_negative(const std::string& option, long long value) {
  if (value < 0) throw UsageError("--" + option + " must be 0 or more, got " + std::to_string(value));
  return value;
}

double require_finite(const std::string& option, double value) {
  if (!std::isfinite(value)) throw UsageError("--" + option + " must be a finite number, got " + ag::format_number(value));
  return value;
}

double require_positive(const std::string& option, double value) {
  if (!(std::isfinite(value) && value > 0)) {
    throw UsageError("--" + option + " must be a finite number above 0, got " + ag::format_number(value));
  }
  return value;
}

}  // namespace cli
