// The options `autograd train` and `autograd compare` share, and their checks.
#pragma once

#include <string>
#include <vector>

#include "cli/cli.h"
#include "train/trainer.h"

namespace cli {

struct TrainOptions {
  std::string dataset = "moons", label, hidden = "64,64", norm = "none", impl = "composed";
  std::string activation = "relu", optimizer = "adam", schedule = "constant", out;
  double lr = 1e-3, momentum = 0.9, weight_decay = 0.0, clip = 0.0, validation = 0.2;
  long long epochs = 20, batch_size = 32, seed = 0;
};

// Adds --dataset --label --hidden --norm --impl --activation --optimizer --lr
// --momentum --weight-decay --schedule --clip --epochs --batch-size --seed --validation --out.
void add_train_options(po::options_description& options, TrainOptions& values, const std::string& out_default);

// Checks every value (throwing UsageError with the option's name) and builds the config;
// norm and impl are passed separately because compare varies them.
ag::TrainConfig make_config(const TrainOptions& values, const std::string& norm, const std::string& impl);

// "64,64" -> {64, 64}; "" -> {} (no hidden layer). UsageError for anything else.
std::vector<arma::uword> parse_hidden(const std::string& text);

// "a,b,c" -> {"a", "b", "c"}.
std::vector<std::string> split_list(const std::string& text);

// Loads the dataset once so an unknown name or a bad file fails before anything is written.
void check_dataset(const ag::TrainConfig& config);

}  // namespace cli
