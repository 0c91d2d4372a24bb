#include "cli/train_options.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "data/csv.h"

namespace cli {

void add_train_options(po::options_description& options, TrainOptions& v, const std::string& out_default) {
  options.add_options()
      ("dataset", po::value(&v.dataset)->default_value(v.dataset), "moons, circles, spirals, xor, sine, digits or FILE.csv")
      ("label", po::value(&v.label), "CSV: the label column (header name or 1-based number; default: the last)")
      ("hidden", po::value(&v.hidden)->default_value(v.hidden), "hidden layer sizes, comma-separated (\"\" for none)")
      ("norm", po::value(&v.norm)->default_value(v.norm), "none, layernorm or rmsnorm (after each hidden Linear)")
      ("impl", po::value(&v.impl)->default_value(v.impl), "composed or fused norm implementation")
      ("activation", po::value(&v.activation)->default_value(v.activation), "relu, tanh or gelu")
      ("optimizer", po::value(&v.optimizer)->default_value(v.optimizer), "sgd, adam or adamw")
      ("lr", po::value(&v.lr)->default_value(v.lr, "0.001"), "learning rate")
      ("momentum", po::value(&v.momentum)->default_value(v.momentum, "0.9"), "sgd momentum")
      ("weight-decay", po::value(&v.weight_decay)->default_value(v.weight_decay, "0"), "weight decay")
      ("schedule", po::value(&v.schedule)->default_value(v.schedule), "learning rate: constant, step (x0.1 every third of the run) or cosine")
      ("clip", po::value(&v.clip)->default_value(v.clip, "0"), "clip the gradient norm to this (0: off)")
      ("epochs", po::value(&v.epochs)->default_value(v.epochs), "passes over the training set")
      ("batch-size", po::value(&v.batch_size)->default_value(v.batch_size), "samples per step")
      ("seed", po::value(&v.seed)->default_value(v.seed), "seed for the data, the split, the weights and the batches")
      ("validation", po::value(&v.validation)->default_value(v.validation, "0.2"), "fraction held out for validation")
      ("out", po::value(&v.out)->default_value(out_default), "output directory");
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) items.push_back(item);
  return items;
}

std::vector<arma::uword> parse_hidden(const std::string& text) {
  std::vector<arma::uword> sizes;
  for (const std::string& item : split_list(text)) {
    const bool digits = !item.empty() && item.size() <= 6 && item.find_first_not_of("0123456789") == std::string::npos;
    if (!digits || std::stoul(item) == 0) {
      throw UsageError("--hidden '" + text + "': '" + item + "' is not a layer size (expected positive integers such as 64,64)");
    }
    sizes.push_back(std::stoul(item));
  }
  return sizes;
}

namespace {
void require(bool ok, const std::string& message) {
  if (!ok) throw UsageError(message);
}
std::string num(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}
}  // namespace

ag::TrainConfig make_config(const TrainOptions& v, const std::string& norm, const std::string& impl) {
  require(std::isfinite(v.lr) && v.lr > 0, "--lr must be a positive number, got " + num(v.lr));
  require(std::isfinite(v.momentum) && v.momentum >= 0 && v.momentum < 1, "--momentum must be in [0, 1), got " + num(v.momentum));
  require(std::isfinite(v.weight_decay) && v.weight_decay >= 0, "--weight-decay must be 0 or more, got " + num(v.weight_decay));
  require(std::isfinite(v.clip) && v.clip >= 0, "--clip must be 0 (off) or more, got " + num(v.clip));
  require(v.validation >= 0 && v.validation < 1, "--validation must be in [0, 1), got " + num(v.validation));
  require(v.epochs >= 1 && v.epochs <= 1000000, "--epochs must be from 1 to 1000000, got " + std::to_string(v.epochs));
  require(v.batch_size >= 1, "--batch-size must be at least 1, got " + std::to_string(v.batch_size));
  require(v.seed >= 0, "--seed must be 0 or more, got " + std::to_string(v.seed));
  require(v.optimizer == "sgd" || v.optimizer == "adam" || v.optimizer == "adamw",
          "--optimizer '" + v.optimizer + "' is not one of sgd, adam, adamw");
  ag::TrainConfig c;
  try {
    c.norm = ag::parse_norm(norm);
    c.impl = ag::parse_impl(impl);
    c.activation = ag::parse_activation(v.activation);
    c.schedule = ag::parse_schedule(v.schedule);
  } catch (const ag::Error& e) {
    throw UsageError(e.what());
  }
  c.dataset = v.dataset;
  c.label_column = v.label;
  c.hidden = parse_hidden(v.hidden);
  c.optimizer = v.optimizer;
  c.lr = v.lr;
  c.momentum = v.momentum;
  c.weight_decay = v.weight_decay;
  c.clip = v.clip;
  c.epochs = static_cast<int>(v.epochs);
  c.batch_size = static_cast<arma::uword>(v.batch_size);
  c.seed = static_cast<std::uint64_t>(v.seed);
  c.validation_fraction = v.validation;
  return c;
}

void check_dataset(const ag::TrainConfig& config) {
  const ag::Dataset data = ag::make_dataset(config.dataset, config.seed, config.label_column);
  if (data.size() < 2) throw ag::DataError(config.dataset + ": needs at least 2 samples, has " + std::to_string(data.size()));
  ag::check_model_size(config, data);  // here too, so a model too big to build refuses before --out is made
}

}  // namespace cli
