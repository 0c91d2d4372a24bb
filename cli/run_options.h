// The options `autograd train` and `autograd compare` share, bound straight onto
// an ag::RunConfig (train/config.h): the config starts as mlp_config() or
// gpt_config(), --model says which, and each option given overwrites its field.
// The defaults are the configs' own, and --help prints them from there, so a
// default is written once, in train/config.h.
//
// An option of the other model is an error (one line, exit 2): `--hidden`
// means nothing to a GPT, `--heads` nothing to an MLP. Kind names ("adamw",
// "cosine") are parsed by train/ and nn/; their ag::Error becomes the usage line.
#pragma once

#include <string>
#include <vector>

#include "cli/cli.h"
#include "train/config.h"

namespace cli {

struct RunOptions {
  ag::RunConfig config;  // mlp_config() or gpt_config(), then every option given
  std::string out;
  // compare only: --norm, --impl and --norm-placement as given, comma-separated lists.
  std::string norms, impls, placements;
};

// Adds every option, bound onto `run`. With `lists` (compare), --norm, --impl and
// --norm-placement are lists kept as text in run.norms, run.impls and run.placements.
void add_run_options(po::options_description& options, RunOptions& run, const std::string& out_default,
                     bool lists = false);

// Parses `args` into `run`: the config of --model's kind, then every option given.
// UsageError for another model, for an option of the other model and for a
// dataset of the other kind. False after printing --help. Does not validate.
bool parse_run_options(const std::string& command, const std::string& summary, po::options_description& options,
                       const std::vector<std::string>& args, RunOptions& run, po::variables_map& vm);

// RunConfig::validate with its fields spelled as the options: UsageError for a value out of range.
void check_run_config(const ag::RunConfig& config);

// The command line's spelling of a config field ("weight_decay" -> "--weight-decay").
std::string option_name(const std::string& field);

// The kind `parse` (train/, nn/) reads from `text`; its ag::Error becomes a UsageError.
template <class Parse>
auto parse_kind(Parse parse, const std::string& text) -> decltype(parse(text)) {
  try {
    return parse(text);
  } catch (const ag::Error& e) {
    throw UsageError(e.what());
  }
}

// "a,b,c" -> {"a", "b", "c"}.
std::vector<std::string> split_list(const std::string& text);

}  // namespace cli
