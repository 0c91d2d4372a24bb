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
// The same without po::notify: the caller notifies, after choosing what the bound options land in.
bool store_options(const std::string& command, const std::string& summary,
                   po::options_description& options, const std::vector<std::string>& args,
                   po::variables_map& vm, const po::positional_options_description* positional = nullptr);

// Checks on parsed numbers, each throwing UsageError "--NAME must be ..., got X".
// Parse counts as signed types: Program_options reads "-1" into an unsigned as 4294967295.
// Program_options also accepts "nan" and "inf" for a double: require_finite rejects them.
long long require_positive(const std::string& option, long long value);      // >= 1
long long require_non_negative(const std::string& option, long long value);  // >= 0
double require_finite(const std::string& option, double value);
double require_positive(const std::string& option, double value);           // finite and > 0

// Subcommands. Each takes the arguments after its name and returns the exit status.
int cmd_demo(const std::vector<std::string>& args);
int cmd_gradcheck(const std::vector<std::string>& args);
int cmd_train(const std::vector<std::string>& args);
int cmd_compare(const std::vector<std::string>& args);
int cmd_eval(const std::vector<std::string>& args);
int cmd_fuzz(const std::vector<std::string>& args);
int cmd_bench(const std::vector<std::string>& args);
int cmd_notebook(const std::vector<std::string>& args);
int cmd_grade(const std::vector<std::string>& args);
int cmd_layernorm(const std::vector<std::string>& args);
int cmd_graph(const std::vector<std::string>& args);
int cmd_sample(const std::vector<std::string>& args);

}  // namespace cli
