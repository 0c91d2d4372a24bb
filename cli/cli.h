// The `autograd` command line: shared pieces of the subcommands.
//
// Exit status: 0 success, 1 a check failed (a gradient, a target), 2 bad
// usage or bad input (unknown option, a value that does not parse, a file that
// cannot be read). Errors are one line on stderr, never a stack dump.
#pragma once

#include <boost/program_options.hpp>

#include <stdexcept>
#include <string>
#include <vector>

namespace cli {

namespace po = boost::program_options;

// Bad usage or bad input: main prints it and exits with status 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Parses a subcommand's arguments. Returns false after printing help for --help.
bool parse_options(const std::string& command, const std::string& summary,
                   po::options_description& options, const std::vector<std::string>& args,
                   po::variables_map& vm, const po::positional_options_description* positional = nullptr);

// Subcommands. Each takes the arguments after its name and returns the exit status.
int cmd_demo(const std::vector<std::string>& args);
int cmd_gradcheck(const std::vector<std::string>& args);

}  // namespace cli
