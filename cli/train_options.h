// The options `autograd train` and `autograd compare` share, parsed once into
// a typed, validated ag::RunConfig (train/config.h).
//
// --model mlp (the default) trains an MLP on a table of numbers; --model gpt
// a character-level GPT on text. Each has options of its own, and giving one
// of the other model's options is an error (one line, exit 2): `--hidden`
// means nothing to a GPT, `--heads` nothing to an MLP. Options both share
// (--lr, --epochs, --batch-size, ...) have per-model defaults; --help shows both.
#pragma once

#include <string>
#include <vector>

#include "cli/cli.h"
#include "data/datasets.h"
#include "train/config.h"

namespace cli {

struct TrainOptions {
  std::string model = "mlp";
  std::string dataset = "moons", label, hidden = "64,64", norm = "none", impl = "composed";
  std::string activation = "relu", optimizer = "adam", schedule = "constant", out;
  double lr = 1e-3, momentum = 0.9, weight_decay = 0.0, clip = 0.0, validation = 0.2;
  long long epochs = 20, batch_size = 32, seed = 0;
  long long threads = 1;  // --threads, default the machine's cores
  // --model gpt only
  long long layers = 4, heads = 4, width = 64, context = 32, warmup = 200;
  std::string norm_placement = "pre";
  double dropout = 0.0;
};

// Adds --model --dataset --label --hidden --norm --impl --activation --optimizer --lr
// --momentum --weight-decay --schedule --clip --epochs --batch-size --seed --validation --out
// and the GPT's --layers --heads --width --context --norm-placement --dropout --warmup.
void add_train_options(po::options_description& options, TrainOptions& values, const std::string& out_default);

// --model mlp or gpt; throws UsageError for another model, for an option that
// does not apply to it, or for a dataset of the other kind (text for an MLP,
// a table for a GPT). Sets the GPT's defaults for the shared options left unset.
void resolve_model_options(const po::variables_map& vm, TrainOptions& values);
bool is_gpt(const TrainOptions& values);

// Parses every option into the typed configuration and validates it, once
// (RunConfig::validate, its messages naming the options): UsageError for a
// value that does not parse or is out of range. The norm, its implementation
// and its placement are passed separately because compare varies them.
ag::RunConfig make_run_config(const TrainOptions& values, const std::string& norm, const std::string& impl,
                              const std::string& placement);

// The command line's spelling of a config field ("weight_decay" -> "--weight-decay").
std::string option_name(const std::string& field);

// The option strings of the norm vocabulary (nn/norm.h) and the others, mapped onto their kinds.
ag::Norm norm_option(const std::string& text);
ag::Impl impl_option(const std::string& text);

// "64,64" -> {64, 64}; "" -> {} (no hidden layer). UsageError for anything else.
std::vector<arma::uword> parse_hidden(const std::string& text);

// "a,b,c" -> {"a", "b", "c"}.
std::vector<std::string> split_list(const std::string& text);

// The MLP's table, loaded once (and handed to ag::TableTask), so an unknown name or a
// bad file fails before anything is written; refuses fewer than 2 samples.
ag::Dataset load_table(const ag::RunConfig& config);

}  // namespace cli
