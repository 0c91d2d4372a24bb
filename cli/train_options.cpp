#include "cli/train_options.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "autograd/error.h"
#include "data/text.h"
#include "train/shards.h"

namespace cli {

void add_train_options(po::options_description& options, TrainOptions& v, const std::string& out_default) {
  options.add_options()
      ("model", po::value(&v.model)->default_value(v.model), "mlp (a table of numbers) or gpt (a character-level GPT on text)")
      ("dataset", po::value(&v.dataset)->default_value(v.dataset), "mlp: moons, circles, spirals, xor, sine, digits or FILE.csv; gpt: words (default) or FILE.txt")
      ("label", po::value(&v.label), "mlp, CSV: the label column (header name or 1-based number; default: the last)")
      ("hidden", po::value(&v.hidden)->default_value(v.hidden), "mlp: hidden layer sizes, comma-separated (\"\" for none)")
      ("norm", po::value(&v.norm)->default_value(v.norm), "none, layernorm or rmsnorm (mlp: after each hidden Linear; gpt: layernorm or rmsnorm, the default layernorm)")
      ("impl", po::value(&v.impl)->default_value(v.impl), "composed or fused norm implementation (gpt: also the softmax and the GELU)")
      ("activation", po::value(&v.activation)->default_value(v.activation), "mlp: relu, tanh or gelu")
      ("optimizer", po::value(&v.optimizer)->default_value(v.optimizer), "sgd, adam or adamw (gpt: adam or adamw, the default adamw)")
      ("lr", po::value(&v.lr)->default_value(v.lr, "0.001"), "learning rate (gpt: the peak, default 0.003)")
      ("momentum", po::value(&v.momentum)->default_value(v.momentum, "0.9"), "mlp, sgd: momentum")
      ("weight-decay", po::value(&v.weight_decay)->default_value(v.weight_decay, "0"), "weight decay (gpt: default 0.01)")
      ("schedule", po::value(&v.schedule)->default_value(v.schedule), "learning rate: constant, step (x0.1 every third of the run) or cosine (gpt: warm-up then cosine to lr/10, the default)")
      ("clip", po::value(&v.clip)->default_value(v.clip, "0"), "clip the gradient norm to this (0: off; gpt: default 1)")
      ("epochs", po::value(&v.epochs)->default_value(v.epochs), "passes over the training set (gpt: default 2)")
      ("batch-size", po::value(&v.batch_size)->default_value(v.batch_size), "samples per step (gpt: lines per step)")
      ("seed", po::value(&v.seed)->default_value(v.seed), "seed for the data, the split, the weights and the batches")
      ("validation", po::value(&v.validation)->default_value(v.validation, "0.2"), "fraction held out for validation (gpt: of the lines, default 0.1)")
      ("threads", po::value(&v.threads)->default_value(ag::default_threads()), "threads a batch's shards run on (default: the machine's cores); any number gives the same result, bit for bit")
      ("out", po::value(&v.out)->default_value(out_default), "output directory")
      ("layers", po::value(&v.layers)->default_value(v.layers), "gpt: transformer blocks")
      ("heads", po::value(&v.heads)->default_value(v.heads), "gpt: attention heads per block")
      ("width", po::value(&v.width)->default_value(v.width), "gpt: embedding width (a multiple of --heads)")
      ("context", po::value(&v.context)->default_value(v.context), "gpt: the longest sequence it reads (longer lines are cut into pieces)")
      ("norm-placement", po::value(&v.norm_placement)->default_value(v.norm_placement), "gpt: pre (GPT-2), post (after the residual) or none")
      ("dropout", po::value(&v.dropout)->default_value(v.dropout, "0"), "gpt: dropout on attention weights and block outputs")
      ("warmup", po::value(&v.warmup)->default_value(v.warmup), "gpt: steps of linear learning-rate warm-up (cosine schedule)");
}

namespace {
const std::vector<std::string> kMlpOnly = {"hidden", "activation", "label", "momentum"};
const std::vector<std::string> kGptOnly = {"layers", "heads", "width", "context", "norm-placement", "dropout", "warmup"};

std::string listed(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& n : names) text += (text.empty() ? "--" : ", --") + n;
  return text;
}

void refuse_foreign(const po::variables_map& vm, const std::vector<std::string>& foreign, const std::string& model,
                    const std::vector<std::string>& own) {
  for (const std::string& name : foreign) {
    if (vm.count(name) && !vm[name].defaulted()) {
      throw UsageError("--" + name + " does not apply to --model " + model + " (its own options: " + listed(own) + ")");
    }
  }
}

// A shared option the user left alone takes the GPT's default.
template <class T>
void gpt_default(const po::variables_map& vm, const char* name, T& value, T gpt_value) {
  if (!vm.count(name) || vm[name].defaulted()) value = gpt_value;
}
}  // namespace

bool is_gpt(const TrainOptions& v) { return v.model == "gpt"; }

void resolve_model_options(const po::variables_map& vm, TrainOptions& v) {
  if (v.model != "mlp" && v.model != "gpt") throw UsageError("--model '" + v.model + "' is not one of mlp, gpt");
  if (!is_gpt(v)) {
    refuse_foreign(vm, kGptOnly, "mlp", kMlpOnly);
    if (ag::is_text_dataset(v.dataset)) {
      throw UsageError("--dataset " + v.dataset + " is text, one sequence per line: train a GPT on it with --model gpt");
    }
    return;
  }
  refuse_foreign(vm, kMlpOnly, "gpt", kGptOnly);
  const ag::LmConfig d;
  gpt_default(vm, "dataset", v.dataset, d.dataset);
  gpt_default(vm, "norm", v.norm, std::string(ag::norm_name(d.norm)));
  gpt_default(vm, "optimizer", v.optimizer, d.optimizer);
  gpt_default(vm, "lr", v.lr, d.lr);
  gpt_default(vm, "weight-decay", v.weight_decay, d.weight_decay);
  gpt_default(vm, "schedule", v.schedule, std::string(d.cosine ? "cosine" : "constant"));
  gpt_default(vm, "clip", v.clip, d.clip);
  gpt_default(vm, "epochs", v.epochs, static_cast<long long>(d.epochs));
  gpt_default(vm, "batch-size", v.batch_size, static_cast<long long>(d.batch_size));
  gpt_default(vm, "validation", v.validation, d.validation_fraction);
  if (!ag::is_text_dataset(v.dataset)) {
    throw UsageError("--model gpt trains on text: --dataset words or a FILE.txt, not '" + v.dataset + "'");
  }
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
// Every optimizer shrinks the weights by a factor 1 - lr * weight_decay a step
// (SGD and AdamW directly, Adam through the gradient it normalises): at 1 or more
// the weights are zeroed or flip sign every step, and 1e308 overflows to inf.
void require_weight_decay(const TrainOptions& v) {
  require(std::isfinite(v.weight_decay) && v.weight_decay >= 0, "--weight-decay must be 0 or more, got " + num(v.weight_decay));
  require(v.lr * v.weight_decay < 1, "--weight-decay " + num(v.weight_decay) + " with --lr " + num(v.lr) +
                                         ": the weights shrink by lr x weight decay a step, which must be below 1 (it is " +
                                         num(v.lr * v.weight_decay) + ")");
}
}  // namespace

ag::TrainConfig make_config(const TrainOptions& v, const std::string& norm, const std::string& impl) {
  require(std::isfinite(v.lr) && v.lr > 0, "--lr must be a positive number, got " + num(v.lr));
  require(std::isfinite(v.momentum) && v.momentum >= 0 && v.momentum < 1, "--momentum must be in [0, 1), got " + num(v.momentum));
  require_weight_decay(v);
  require(std::isfinite(v.clip) && v.clip >= 0, "--clip must be 0 (off) or more, got " + num(v.clip));
  require(v.validation >= 0 && v.validation < 1, "--validation must be in [0, 1), got " + num(v.validation));
  require(v.epochs >= 1 && v.epochs <= 1000000, "--epochs must be from 1 to 1000000, got " + std::to_string(v.epochs));
  require(v.batch_size >= 1, "--batch-size must be at least 1, got " + std::to_string(v.batch_size));
  require(v.seed >= 0, "--seed must be 0 or more, got " + std::to_string(v.seed));
  require(v.threads >= 1 && v.threads <= 256, "--threads must be from 1 to 256, got " + std::to_string(v.threads));
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
  c.threads = static_cast<int>(v.threads);
  return c;
}

namespace {
long long within(const std::string& option, long long value, long long lo, long long hi) {
  require(value >= lo && value <= hi, "--" + option + " must be from " + std::to_string(lo) + " to " + std::to_string(hi) +
                                          ", got " + std::to_string(value));
  return value;
}
}  // namespace

ag::LmConfig make_lm_config(const TrainOptions& v, const std::string& placement, const std::string& norm,
                            const std::string& impl) {
  require(std::isfinite(v.lr) && v.lr > 0, "--lr must be a positive number, got " + num(v.lr));
  require_weight_decay(v);
  require(std::isfinite(v.clip) && v.clip >= 0, "--clip must be 0 (off) or more, got " + num(v.clip));
  require(v.validation > 0 && v.validation < 1, "--validation must be above 0 and below 1 for --model gpt, got " + num(v.validation));
  require(v.dropout >= 0 && v.dropout < 1, "--dropout must be in [0, 1), got " + num(v.dropout));
  require(v.seed >= 0, "--seed must be 0 or more, got " + std::to_string(v.seed));
  require(v.optimizer == "adam" || v.optimizer == "adamw", "--optimizer '" + v.optimizer + "' is not one of adam, adamw (--model gpt)");
  require(v.schedule == "cosine" || v.schedule == "constant",
          "--schedule '" + v.schedule + "' is not one of cosine, constant (--model gpt)");
  ag::LmConfig c;
  c.layers = static_cast<arma::uword>(within("layers", v.layers, 1, 48));
  c.heads = static_cast<arma::uword>(within("heads", v.heads, 1, 64));
  c.width = static_cast<arma::uword>(within("width", v.width, 1, 1024));
  require(c.width % c.heads == 0, "--width " + std::to_string(c.width) + " must be a multiple of --heads " + std::to_string(c.heads));
  c.context = static_cast<arma::uword>(within("context", v.context, 1, 1024));
  c.epochs = static_cast<int>(within("epochs", v.epochs, 1, 1000000));
  c.batch_size = static_cast<arma::uword>(within("batch-size", v.batch_size, 1, 4096));
  c.warmup = static_cast<int>(within("warmup", v.warmup, 0, 1000000000));
  c.threads = static_cast<int>(within("threads", v.threads, 1, 256));
  try {
    c.placement = ag::parse_placement(placement);
    c.norm = ag::parse_norm(norm);
    c.impl = ag::parse_impl(impl);
  } catch (const ag::Error& e) {
    throw UsageError(e.what());
  }
  require(c.norm != ag::Norm::None, "--norm none: a GPT's norm is layernorm or rmsnorm (for no norm: --norm-placement none)");
  c.dataset = v.dataset;
  c.dropout = v.dropout;
  c.optimizer = v.optimizer;
  c.lr = v.lr;
  c.weight_decay = v.weight_decay;
  c.cosine = v.schedule == "cosine";
  c.clip = v.clip;
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
