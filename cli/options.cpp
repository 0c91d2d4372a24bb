#include <cmath>
#include <iostream>
#include <sstream>

#include "cli/cli.h"

namespace cli {

bool parse_options(const std::string& command, const std::string& summary,
                   po::options_description& options, const std::vector<std::string>& args,
                   po::variables_map& vm, const po::positional_options_description* positional) {
  options.add_options()("help,h", "show this help");
  po::command_line_parser parser(args);
  parser.options(options);
  // With no positional arguments declared, a stray word is an error ("too many
  // positional options"), not silently ignored.
  static const po::positional_options_description none;
  parser.positional(positional != nullptr ? *positional : none);
  po::store(parser.run(), vm);
  if (vm.count("help")) {
    std::cout << "usage: autograd " << command << " [options]\n" << summary << "\n\n" << options;
    return false;
  }
  po::notify(vm);
  return true;
}

namespace {
std::string number_str(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}
}  // namespace

long long require_positive(const std::string& option, long long value) {
  if (value < 1) throw UsageError("--" + option + " must be 1 or more, got " + std::to_string(value));
  return value;
}

long long require_non_negative(const std::string& option, long long value) {
  if (value < 0) throw UsageError("--" + option + " must be 0 or more, got " + std::to_string(value));
  return value;
}

double require_finite(const std::string& option, double value) {
  if (!std::isfinite(value)) throw UsageError("--" + option + " must be a finite number, got " + number_str(value));
  return value;
}

double require_positive(const std::string& option, double value) {
  if (!(std::isfinite(value) && value > 0)) {
    throw UsageError("--" + option + " must be a finite number above 0, got " + number_str(value));
  }
  return value;
}

}  // namespace cli
