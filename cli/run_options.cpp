#include "cli/run_options.h"

#include <sstream>

#include "autograd/format.h"
#include "data/text.h"
#include "train/shards.h"

namespace cli {

namespace {

const std::vector<std::string> kMlpOnly = {"hidden", "activation", "label", "momentum", "points", "noise", "init-scale", "steps"};
const std::vector<std::string> kGptOnly = {"layers", "heads", "width", "context", "dropout", "warmup"};

// The help's defaults, read from the configs: " (default X)" when the models
// share it, else " (default X; gpt Y)".
template <class Show>
std::string shared_default(Show show) {
  const std::string mlp(show(ag::mlp_config())), gpt(show(ag::gpt_config()));
  return " (default " + mlp + (mlp == gpt ? "" : "; gpt " + gpt) + ")";
}
template <class Show>
std::string mlp_default(Show show) { return " (default " + std::string(show(ag::mlp_config())) + ")"; }
template <class Show>
std::string gpt_default(Show show) { return " (default " + std::string(show(ag::gpt_config())) + ")"; }

std::string hidden_text(const ag::RunConfig& c) {
  std::string text;
  for (arma::uword h : c.hidden) text += (text.empty() ? "" : ",") + std::to_string(h);
  return text.empty() ? "\"\"" : text;
}

// An option whose text `set` parses into the config when it is given.
template <class Set>
po::typed_value<std::string>* parsed(Set set) {
  return po::value<std::string>()->notifier([set](const std::string& text) { set(text); });
}

void add_shared(po::options_description& options, RunOptions& run) {
  ag::RunConfig& c = run.config;
  auto number = [](double ag::RunConfig::*field) { return [field](const ag::RunConfig& d) { return ag::format_number(d.*field); }; };
  auto count = [](long long ag::RunConfig::*field) { return [field](const ag::RunConfig& d) { return std::to_string(d.*field); }; };
  options.add_options()
      ("model", po::value<std::string>(), ("mlp (a table of numbers) or gpt (a character-level GPT on text)" +
                                           mlp_default([](const ag::RunConfig& d) { return ag::model_name(d.model); })).c_str())
      ("dataset", po::value(&c.dataset), ("mlp: moons, circles, spirals, spiral, xor, blobs, sine, digits or FILE.csv; gpt: words or FILE.txt" +
                                          shared_default([](const ag::RunConfig& d) { return d.dataset; })).c_str())
      ("optimizer", parsed([&c](const std::string& t) { c.optimizer = parse_kind([](const std::string& s) { return ag::parse_optimizer(s, option_name); }, t); }),
       ("sgd, adam or adamw (gpt: adam or adamw)" + shared_default([](const ag::RunConfig& d) { return ag::optimizer_name(d.optimizer); })).c_str())
      ("lr", po::value(&c.lr), ("learning rate (gpt: the peak, after the warm-up)" + shared_default(number(&ag::RunConfig::lr))).c_str())
      ("weight-decay", po::value(&c.weight_decay), ("weight decay" + shared_default(number(&ag::RunConfig::weight_decay))).c_str())
      ("schedule", parsed([&c](const std::string& t) { c.schedule = parse_kind(ag::parse_schedule, t); }),
       ("learning rate: constant, step (x0.1 every third of the run) or cosine (gpt: warm-up then cosine to lr/10)" +
        shared_default([](const ag::RunConfig& d) { return ag::schedule_name(d.schedule); })).c_str())
      ("clip", po::value(&c.clip), ("clip the gradient norm to this (0: off)" + shared_default(number(&ag::RunConfig::clip))).c_str())
      ("epochs", po::value(&c.epochs), ("passes over the training set" + shared_default(count(&ag::RunConfig::epochs))).c_str())
      ("batch-size", po::value(&c.batch_size), ("samples per step (gpt: lines per step)" + shared_default(count(&ag::RunConfig::batch_size))).c_str())
      ("seed", po::value<long long>()->notifier([&c](long long s) {
         if (s < 0) throw UsageError("--seed must be 0 or more, got " + std::to_string(s));
         c.seed = static_cast<std::uint64_t>(s);
       }), ("seed for the data, the split, the weights and the batches" +
            shared_default([](const ag::RunConfig& d) { return std::to_string(d.seed); })).c_str())
      ("validation", po::value(&c.validation_fraction), ("fraction held out for validation (gpt: of the lines)" +
                                                         shared_default(number(&ag::RunConfig::validation_fraction))).c_str())
      ("threads", po::value(&c.threads), ("threads a batch's shards run on, 0 for the machine's cores (" +
                                          std::to_string(ag::default_threads()) + " here); any number gives the same "
                                          "result, bit for bit" + shared_default(count(&ag::RunConfig::threads))).c_str());
}

void add_norm_options(po::options_description& options, RunOptions& run, bool lists) {
  ag::RunConfig& c = run.config;
  const std::string norm_help = "none, layernorm, rmsnorm or batchnorm (mlp: after each hidden Linear; gpt: layernorm or rmsnorm)";
  const std::string impl_help = "composed or fused norm implementation (gpt: also the softmax and the GELU)";
  const std::string placement_help =
      "mlp: pre (each norm before its activation) or post (after it); gpt: pre (GPT-2), post (after the residual) or none";
  const std::string gpt_norm = ag::norm_name(ag::gpt_config().norm), gpt_placement = ag::placement_name(ag::gpt_config().placement);
  if (lists) {  // compare: LayerNorm, composed vs fused, unless another list is given
    options.add_options()
        ("norm", po::value(&run.norms)->default_value(gpt_norm), ("a list of: " + norm_help).c_str())
        ("impl", po::value(&run.impls)->default_value("composed,fused"), ("a list of: " + impl_help).c_str())
        ("norm-placement", po::value(&run.placements)->default_value(gpt_placement), ("a list of: " + placement_help).c_str());
    return;
  }
  options.add_options()
      ("norm", parsed([&c](const std::string& t) { c.norm = parse_kind(ag::parse_norm, t); }),
       (norm_help + shared_default([](const ag::RunConfig& d) { return ag::norm_name(d.norm); })).c_str())
      ("impl", parsed([&c](const std::string& t) { c.impl = parse_kind(ag::parse_impl, t); }),
       (impl_help + shared_default([](const ag::RunConfig& d) { return ag::impl_name(d.impl); })).c_str())
      ("norm-placement", parsed([&c](const std::string& t) { c.placement = parse_kind(ag::parse_placement, t); }),
       (placement_help + shared_default([](const ag::RunConfig& d) { return ag::placement_name(d.placement); })).c_str());
}

void add_model_options(po::options_description& options, RunOptions& run) {
  ag::RunConfig& c = run.config;
  auto count = [](long long ag::RunConfig::*field) { return [field](const ag::RunConfig& d) { return std::to_string(d.*field); }; };
  options.add_options()
      ("label", po::value(&c.label_column), "mlp, CSV: the label column (header name or 1-based number; default: the last)")
      ("hidden", parsed([&c](const std::string& t) { c.hidden = parse_kind([](const std::string& s) { return ag::parse_hidden(s, option_name); }, t); }),
       ("mlp: hidden layer sizes, comma-separated (\"\" for none)" + mlp_default(hidden_text)).c_str())
      ("activation", parsed([&c](const std::string& t) { c.activation = parse_kind(ag::parse_activation, t); }),
       ("mlp: relu, tanh or gelu" + mlp_default([](const ag::RunConfig& d) { return ag::activation_name(d.activation); })).c_str())
      ("points", po::value<long long>()->notifier([&c](long long n) { c.generated.points = n; }),
       "mlp, a generated dataset: the number of points (default: the dataset's own, moons 1000)")
      ("noise", po::value<double>()->notifier([&c](double s) { c.generated.noise = s; }),
       "mlp, a generated dataset: the noise (default: the dataset's own, moons 0.15)")
      ("init-scale", po::value(&c.init_scale), ("mlp: multiplies the initial weights" +
                                                mlp_default([](const ag::RunConfig& d) { return ag::format_number(d.init_scale); })).c_str())
      ("steps", po::value(&c.steps), ("mlp: stop after this many steps, whatever --epochs says (0: the epochs decide)" +
                                      mlp_default(count(&ag::RunConfig::steps))).c_str())
      ("momentum", po::value(&c.momentum), ("mlp, sgd: momentum" + mlp_default([](const ag::RunConfig& d) { return ag::format_number(d.momentum); })).c_str())
      ("layers", po::value(&c.layers), ("gpt: transformer blocks" + gpt_default(count(&ag::RunConfig::layers))).c_str())
      ("heads", po::value(&c.heads), ("gpt: attention heads per block" + gpt_default(count(&ag::RunConfig::heads))).c_str())
      ("width", po::value(&c.width), ("gpt: embedding width (a multiple of --heads)" + gpt_default(count(&ag::RunConfig::width))).c_str())
      ("context", po::value(&c.context), ("gpt: the longest sequence it reads (longer lines are cut into pieces)" +
                                          gpt_default(count(&ag::RunConfig::context))).c_str())
      ("dropout", po::value(&c.dropout), ("gpt: dropout on attention weights and block outputs" +
                                          gpt_default([](const ag::RunConfig& d) { return ag::format_number(d.dropout); })).c_str())
      ("warmup", po::value(&c.warmup), ("gpt: steps of linear learning-rate warm-up (cosine schedule)" + gpt_default(count(&ag::RunConfig::warmup))).c_str());
}

std::string listed(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& n : names) text += (text.empty() ? "--" : ", --") + n;
  return text;
}

void refuse_foreign(const po::variables_map& vm, ag::ModelKind model) {
  const bool gpt = model == ag::ModelKind::Gpt;
  for (const std::string& name : gpt ? kMlpOnly : kGptOnly) {
    if (vm.count(name) && !vm[name].defaulted()) {
      throw UsageError("--" + name + " does not apply to --model " + ag::model_name(model) + " (its own options: " +
                       listed(gpt ? kGptOnly : kMlpOnly) + ")");
    }
  }
}

void require_dataset_kind(const ag::RunConfig& c) {
  const bool text = ag::is_text_dataset(c.dataset);
  if (c.model == ag::ModelKind::Mlp && text) {
    throw UsageError("--dataset " + c.dataset + " is text, one sequence per line: train a GPT on it with --model gpt");
  }
  if (c.model == ag::ModelKind::Gpt && !text) {
    throw UsageError("--model gpt trains on text: --dataset words or a FILE.txt, not '" + c.dataset + "'");
  }
}

}  // namespace

void add_run_options(po::options_description& options, RunOptions& run, const std::string& out_default, bool lists) {
  add_shared(options, run);
  add_norm_options(options, run, lists);
  add_model_options(options, run);
  options.add_options()("out", po::value(&run.out)->default_value(out_default), "output directory");
}

bool parse_run_options(const std::string& command, const std::string& summary, po::options_description& options,
                       const std::vector<std::string>& args, RunOptions& run, po::variables_map& vm) {
  if (!store_options(command, summary, options, args, vm)) return false;
  const ag::ModelKind model = vm.count("model") ? parse_kind([](const std::string& s) { return ag::parse_model(s, option_name); },
                                                             vm["model"].as<std::string>())
                                                : ag::ModelKind::Mlp;
  refuse_foreign(vm, model);
  run.config = model == ag::ModelKind::Gpt ? ag::gpt_config() : ag::mlp_config();  // the options bound to it land next
  po::notify(vm);
  require_dataset_kind(run.config);
  return true;
}

void check_run_config(const ag::RunConfig& config) {
  try {
    config.validate(option_name);
  } catch (const ag::ConfigError& e) {
    throw UsageError(e.what());
  }
}

std::string option_name(const std::string& field) {
  if (field == "validation_fraction") return "--validation";
  if (field == "placement") return "--norm-placement";
  if (field == "label_column") return "--label";
  std::string name = "--" + field;
  for (char& c : name) c = c == '_' ? '-' : c;
  return name;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) items.push_back(item);
  return items;
}

}  // namespace cli
