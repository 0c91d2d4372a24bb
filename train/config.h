// One run's configuration, typed, for either model: what `autograd train` and
// `autograd compare` parse their options into, and what a program sets by hand.
// It validates itself (validate(): one function, called where the options are
// parsed, and by ag::train as a guard), before anything is loaded or built.
// Counts are signed (long long), so that -1 reads as -1 in a message, not as 2^64 - 1.
//
// Every random draw of a run comes from ag::Rng streams derived from `seed`
// (2: the split, 3: the initial weights, 4: the batch order, 5: dropout), so
// the same configuration gives bit-identical losses on every run, on any
// number of threads (train/shards.h).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "data/datasets.h"
#include "nn/mlp.h"
#include "nn/optim.h"
#include "nn/schedule.h"
#include "nn/transformer.h"

namespace ag {

enum class ModelKind {
  Mlp,  // a multilayer perceptron on a table of numbers (data/datasets.h)
  Gpt   // a character-level GPT on lines of text (data/text.h)
};
enum class OptimizerKind { SGD, Adam, AdamW };

const char* model_name(ModelKind kind);          // "mlp", "gpt"
const char* optimizer_name(OptimizerKind kind);  // "sgd", "adam", "adamw"

// Names a config field in a message (the command line passes its option names); empty: the field's own name.
using Spell = std::function<std::string(const std::string&)>;

// The kinds' names, parsed once for every program: the run's here, the modules'
// beside them in nn/ (parse_norm, parse_impl, parse_activation, parse_placement,
// parse_schedule). Each throws ConfigError naming the field and the names it takes.
ModelKind parse_model(const std::string& name, const Spell& spell = {});
OptimizerKind parse_optimizer(const std::string& name, const Spell& spell = {});
// The MLP's hidden sizes: "64,64" -> {64, 64}; "" -> {} (no hidden layer).
std::vector<arma::uword> parse_hidden(const std::string& text, const Spell& spell = {});

struct RunConfig {
  ModelKind model = ModelKind::Mlp;
  std::string dataset = "moons";  // mlp: a name from dataset_names() or FILE.csv; gpt: "words" or FILE.txt
  std::string label_column;       // mlp, CSV: name or 1-based number; empty = last
  GeneratedSize generated;        // mlp, a generated dataset: points and noise; unset = the dataset's own
  Norm norm = Norm::None;         // gpt: LayerNorm or RMSNorm
  Impl impl = Impl::Composed;     // gpt: also the softmax and the GELU
  // The MLP's shape.
  std::vector<arma::uword> hidden{64, 64};
  Activation activation = Activation::ReLU;
  double init_scale = 1.0;  // multiplies the initial weights (Kaiming's or Xavier's)
  // The GPT's shape.
  long long layers = 4, heads = 4, width = 64, context = 32;
  Placement placement = Placement::Pre;
  double dropout = 0.0;
  long long evals_per_epoch = 1;  // validation passes per epoch (the points of the curves)
  // Optimisation.
  OptimizerKind optimizer = OptimizerKind::Adam;
  double lr = 1e-3;  // the peak, after any warm-up
  double momentum = 0.9;  // sgd
  double weight_decay = 0.0;
  double beta2 = 0.999;   // adam, adamw
  Schedule::Kind schedule = Schedule::Kind::Constant;
  long long warmup = 0;        // cosine: steps of linear warm-up
  double clip = 0.0;      // gradient-norm clipping; 0 = off
  long long epochs = 20;
  long long steps = 0;    // mlp: stop after this many steps (the epochs then do not count); 0 = the epochs decide
  long long batch_size = 32;  // samples (gpt: lines) per step
  std::uint64_t seed = 0;
  double validation_fraction = 0.2;
  long long threads = 0;  // a batch's shards run on this many threads; 0 = the machine's cores.
                    // The same bits for any number (train/shards.h); with dropout, one thread.

  // Throws ConfigError naming the first value that is out of range. `spell`
  // names a field in the message (the command line passes its option names).
  void validate(const Spell& spell = {}) const;
};

// The defaults of each model: mlp_config() is RunConfig{}; gpt_config() is
// makemore's and nanoGPT's small-model setting: the words, 4 pre-LN blocks of
// width 64, AdamW (lr 3e-3, weight decay 0.01, beta2 0.99), 200 steps of warm-up
// then a cosine to lr / 10, clipping at 1, 2 epochs, 4 evaluations an epoch.
// (Inline: the page (page/) reads checkpoints with these defaults and compiles no train/ code but theirs.)
inline RunConfig mlp_config() { return RunConfig{}; }

inline RunConfig gpt_config() {
  RunConfig c;
  c.model = ModelKind::Gpt;
  c.dataset = "words";
  c.norm = Norm::LayerNorm;
  c.evals_per_epoch = 4;
  c.optimizer = OptimizerKind::AdamW;
  c.lr = 3e-3;
  c.weight_decay = 0.01;
  c.beta2 = 0.99;  // makemore's and nanoGPT's small-model choice: adapts faster than 0.999
  c.schedule = Schedule::Kind::Cosine;
  c.warmup = 200;
  c.clip = 1.0;
  c.epochs = 2;
  c.validation_fraction = 0.1;
  return c;
}


// A value out of range: `field` is the config's name for it.
struct ConfigError : Error {
  ConfigError(const std::string& field, const std::string& message) : Error(message), field(field) {}
  std::string field;
};

// The optimizer the config names, over `params`, starting at `lr`: the schedule's
// first rate (make_schedule), which alone reads config.lr and sets every step's.
std::unique_ptr<Optimizer> make_optimizer(const RunConfig& config, std::vector<Parameter*> params, double lr);

// The schedule, in epochs when the run evaluates once an epoch (t = epoch - 1), else in
// steps (t = steps taken) of `total_steps`: schedule_in_steps says which.
bool schedule_in_steps(const RunConfig& config);
Schedule make_schedule(const RunConfig& config, long long total_steps);

// The threads a batch's shards run on: config.threads, the machine's cores for 0, 1 with dropout.
int shard_threads(const RunConfig& config);

}  // namespace ag
