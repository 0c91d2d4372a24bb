#include <iostream>

#include "cli/cli.h"

namespace cli {

bool parse_options(const std::string& command, const std::string& summary,
                   po::options_description& options, const std::vector<std::string>& args,
                   po::variables_map& vm, const po::positional_options_description* positional) {
  options.add_options()("help,h", "show this help");
  po::command_line_parser parser(args);
  parser.options(options);
  if (positional != nullptr) parser.positional(*positional);
  po::store(parser.run(), vm);
  if (vm.count("help")) {
    std::cout << "usage: autograd " << command << " [options]\n" << summary << "\n\n" << options;
    return false;
  }
  po::notify(vm);
  return true;
}

}  // namespace cli
