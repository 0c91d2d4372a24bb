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
  const ag::RunConfig d = ag::gpt_config();
  gpt_default(vm, "dataset", v.dataset, d.dataset);
  gpt_default(vm, "norm", v.norm, std::string(ag::norm_name(d.norm)));
  gpt_default(vm, "optimizer", v.optimizer, std::string(ag::optimizer_name(d.optimizer)));
  gpt_default(vm, "lr", v.lr, d.lr);
  gpt_default(vm, "weight-decay", v.weight_decay, d.weight_decay);
  gpt_default(vm, "schedule", v.schedule, std::string(ag::schedule_name(d.schedule)));
  gpt_default(vm, "clip", v.clip, d.clip);
  gpt_default(vm, "epochs", v.epochs, d.epochs);
  gpt_default(vm, "batch-size", v.batch_size, d.batch_size);
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

// The kind whose name is `text`, else "unknown <what> 'text' (expected a, b or c)".
template <class Kind>
Kind choose(const std::string& text, const std::vector<Kind>& kinds, const char* (*name)(Kind), const std::string& what) {
  std::string expected;
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    if (text == name(kinds[i])) return kinds[i];
    expected += std::string(i == 0 ? "" : i + 1 == kinds.size() ? " or " : ", ") + name(kinds[i]);
  }
  throw UsageError("unknown " + what + " '" + text + "' (expected " + expected + ")");
}

ag::OptimizerKind optimizer_option(const std::string& text) {
  for (ag::OptimizerKind k : {ag::OptimizerKind::SGD, ag::OptimizerKind::Adam, ag::OptimizerKind::AdamW}) {
    if (text == ag::optimizer_name(k)) return k;
  }
  throw UsageError("--optimizer '" + text + "' is not one of sgd, adam, adamw");
}

// The fields only one model has.
void set_model_options(const TrainOptions& v, const std::string& placement, ag::RunConfig& c) {
  if (c.model == ag::ModelKind::Gpt) {
    c.placement = choose(placement, {ag::Placement::Pre, ag::Placement::Post, ag::Placement::None}, ag::placement_name,
                         "norm placement");
    c.layers = v.layers;
    c.heads = v.heads;
    c.width = v.width;
    c.context = v.context;
    c.warmup = v.warmup;
    c.dropout = v.dropout;
    return;
  }
  c.activation = choose(v.activation, {ag::Activation::ReLU, ag::Activation::Tanh, ag::Activation::GELU},
                        ag::activation_name, "activation");
  c.hidden = parse_hidden(v.hidden);
  c.label_column = v.label;
  c.momentum = v.momentum;
}
}  // namespace

ag::Norm norm_option(const std::string& text) { return choose(text, ag::norm_kinds(), ag::norm_name, "norm"); }
ag::Impl impl_option(const std::string& text) { return choose(text, ag::impl_kinds(), ag::impl_name, "implementation"); }

std::string option_name(const std::string& field) {
  if (field == "validation_fraction") return "--validation";
  if (field == "placement") return "--norm-placement";
  std::string name = "--" + field;
  for (char& c : name) c = c == '_' ? '-' : c;
  return name;
}

ag::RunConfig make_run_config(const TrainOptions& v, const std::string& norm, const std::string& impl,
                              const std::string& placement) {
  ag::RunConfig c = is_gpt(v) ? ag::gpt_config() : ag::mlp_config();
  require(v.seed >= 0, "--seed must be 0 or more, got " + std::to_string(v.seed));
  c.norm = norm_option(norm);
  c.impl = impl_option(impl);
  c.optimizer = optimizer_option(v.optimizer);
  c.schedule = choose(v.schedule, {ag::Schedule::Kind::Constant, ag::Schedule::Kind::Step, ag::Schedule::Kind::Cosine},
                      ag::schedule_name, "schedule");
  set_model_options(v, placement, c);
  c.dataset = v.dataset;
  c.lr = v.lr;
  c.weight_decay = v.weight_decay;
  c.clip = v.clip;
  c.epochs = v.epochs;
  c.batch_size = v.batch_size;
  c.seed = static_cast<std::uint64_t>(v.seed);
  c.validation_fraction = v.validation;
  c.threads = v.threads;
  try {
    c.validate(option_name);
  } catch (const ag::ConfigError& e) {
    throw UsageError(e.what());
  }
  return c;
}

ag::Dataset load_table(const ag::RunConfig& config) {
  ag::Dataset data = ag::make_dataset(config.dataset, config.seed, config.label_column);
  if (data.size() < 2) throw ag::DataError(config.dataset + ": needs at least 2 samples, has " + std::to_string(data.size()));
  return data;
}

}  // namespace cli
