// autograd: the command line of the teaching autograd framework.
#include <iostream>
#include <string>
#include <vector>

#include "autograd/tape.h"
#include "cli/cli.h"
#include "data/csv.h"

namespace {

struct Command {
  const char* name;
  const char* summary;
  int (*run)(const std::vector<std::string>&);
};

const std::vector<Command>& commands() {
  static const std::vector<Command> list = {
      {"demo", "a tiny expression, its tape and its gradients", cli::cmd_demo},
      {"gradcheck", "check every op's backward against finite differences", cli::cmd_gradcheck},
  };
  return list;
}

void print_usage(std::ostream& os) {
  os << "usage: autograd <command> [options]    (autograd <command> --help for its options)\n\ncommands:\n";
  for (const Command& c : commands()) {
    os << "  " << c.name << std::string(14 - std::string(c.name).size(), ' ') << c.summary << "\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    print_usage(std::cerr);
    return 2;
  }
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    print_usage(std::cout);
    return 0;
  }
  for (const Command& c : commands()) {
    if (args[0] != c.name) continue;
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    try {
      return c.run(rest);
    } catch (const cli::UsageError& e) {
      std::cerr << "autograd " << c.name << ": " << e.what() << "\n";
      return 2;
    } catch (const ag::DataError& e) {
      std::cerr << "autograd " << c.name << ": " << e.what() << "\n";
      return 2;
    } catch (const cli::po::error& e) {
      std::cerr << "autograd " << c.name << ": " << e.what() << "\n";
      return 2;
    } catch (const std::exception& e) {
      std::cerr << "autograd " << c.name << ": " << e.what() << "\n";
      return 1;
    }
  }
  std::cerr << "autograd: unknown command '" << args[0] << "' (autograd --help lists the commands)\n";
  return 2;
}
