// The options `autograd train` and `autograd compare` share, and their checks.
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
#include "train/lm_trainer.h"
#include "train/trainer.h"

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

// Checks every value (throwing UsageError with the option's name) and builds the config;
// norm and impl are passed separately because compare varies them.
ag::TrainConfig make_config(const TrainOptions& values, const std::string& norm, const std::string& impl);
// The same for --model gpt; compare varies the placement, the norm or the impl.
ag::LmConfig make_lm_config(const TrainOptions& values, const std::string& placement, const std::string& norm,
                            const std::string& impl);

// "64,64" -> {64, 64}; "" -> {} (no hidden layer). UsageError for anything else.
std::vector<arma::uword> parse_hidden(const std::string& text);

// "a,b,c" -> {"a", "b", "c"}.
std::vector<std::string> split_list(const std::string& text);

// Loads the dataset once so an unknown name or a bad file fails before anything is written.
void check_dataset(const ag::TrainConfig& config);

}  // namespace cli
