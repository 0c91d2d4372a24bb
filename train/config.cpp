#include "train/config.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "autograd/format.h"
#include "train/shards.h"

namespace ag {

const char* model_name(ModelKind kind) { return kind == ModelKind::Gpt ? "gpt" : "mlp"; }

const char* optimizer_name(OptimizerKind kind) {
  return kind == OptimizerKind::SGD ? "sgd" : kind == OptimizerKind::AdamW ? "adamw" : "adam";
}

namespace {

std::string spelled(const Spell& spell, const std::string& field) { return spell ? spell(field) : field; }

}  // namespace

ModelKind parse_model(const std::string& name, const Spell& spell) {
  if (name == "mlp") return ModelKind::Mlp;
  if (name == "gpt") return ModelKind::Gpt;
  throw ConfigError("model", spelled(spell, "model") + " '" + name + "' is not one of mlp, gpt");
}

OptimizerKind parse_optimizer(const std::string& name, const Spell& spell) {
  for (OptimizerKind k : {OptimizerKind::SGD, OptimizerKind::Adam, OptimizerKind::AdamW}) {
    if (name == optimizer_name(k)) return k;
  }
  throw ConfigError("optimizer", spelled(spell, "optimizer") + " '" + name + "' is not one of sgd, adam, adamw");
}

std::vector<arma::uword> parse_hidden(const std::string& text, const Spell& spell) {
  std::vector<arma::uword> sizes;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    const bool digits = !item.empty() && item.size() <= 6 && item.find_first_not_of("0123456789") == std::string::npos;
    if (!digits || std::stoul(item) == 0) {
      throw ConfigError("hidden", spelled(spell, "hidden") + " '" + text + "': '" + item +
                                      "' is not a layer size (expected positive integers such as 64,64)");
    }
    sizes.push_back(std::stoul(item));
  }
  return sizes;
}

namespace {

// The checks, each naming its field through `spell`.
struct Checker {
  const Spell& spell;
  std::string name(const std::string& field) const { return spell ? spell(field) : field; }
  void require(bool ok, const std::string& field, const std::string& message) const {
    if (!ok) throw ConfigError(field, name(field) + " " + message);
  }
  void within(const std::string& field, long long value, long long lo, long long hi) const {
    require(value >= lo && value <= hi, field,
            "must be from " + std::to_string(lo) + " to " + std::to_string(hi) + ", got " + std::to_string(value));
  }
};

// Every optimizer shrinks the weights by a factor 1 - lr * weight_decay a step
// (SGD and AdamW directly, Adam through the gradient it normalises): at 1 or more
// the weights are zeroed or flip sign every step, and 1e308 overflows to inf.
void check_optimisation(const RunConfig& c, const Checker& check) {
  check.require(std::isfinite(c.lr) && c.lr > 0, "lr", "must be a positive number, got " + ag::format_number(c.lr));
  if (c.model == ModelKind::Mlp) {
    check.require(std::isfinite(c.momentum) && c.momentum >= 0 && c.momentum < 1, "momentum",
                  "must be in [0, 1), got " + ag::format_number(c.momentum));
  }
  check.require(std::isfinite(c.weight_decay) && c.weight_decay >= 0, "weight_decay",
                "must be 0 or more, got " + ag::format_number(c.weight_decay));
  check.require(c.lr * c.weight_decay < 1, "weight_decay",
                ag::format_number(c.weight_decay) + " with " + check.name("lr") + " " + ag::format_number(c.lr) +
                    ": the weights shrink by lr x weight decay a step, which must be below 1 (it is " +
                    ag::format_number(c.lr * c.weight_decay) + ")");
  check.require(std::isfinite(c.beta2) && c.beta2 >= 0 && c.beta2 < 1, "beta2", "must be in [0, 1), got " + ag::format_number(c.beta2));
  check.require(std::isfinite(c.clip) && c.clip >= 0, "clip", "must be 0 (off) or more, got " + ag::format_number(c.clip));
}

void check_loop(const RunConfig& c, const Checker& check) {
  const bool gpt = c.model == ModelKind::Gpt;
  if (gpt) {
    check.require(c.validation_fraction > 0 && c.validation_fraction < 1, "validation_fraction",
                  "must be above 0 and below 1 for " + check.name("model") + " gpt, got " + ag::format_number(c.validation_fraction));
  } else {
    check.require(c.validation_fraction >= 0 && c.validation_fraction < 1, "validation_fraction",
                  "must be in [0, 1), got " + ag::format_number(c.validation_fraction));
  }
  check.within("epochs", c.epochs, 1, 1000000);
  if (gpt) check.within("batch_size", c.batch_size, 1, 4096);
  check.require(c.batch_size >= 1, "batch_size", "must be at least 1, got " + std::to_string(c.batch_size));
  check.require(c.batch_size <= 100000000, "batch_size", "must be at most 100000000, got " + std::to_string(c.batch_size));
  check.require(c.threads >= 0 && c.threads <= 256, "threads",
                "must be from 1 to 256 (0: the machine's cores), got " + std::to_string(c.threads));
  check.require(c.seed <= 9223372036854775807ULL, "seed", "must be at most 9223372036854775807");
  check.require(c.evals_per_epoch >= 1, "evals_per_epoch", "must be at least 1, got " + std::to_string(c.evals_per_epoch));
}

void check_gpt(const RunConfig& c, const Checker& check) {
  const std::string gpt = "(" + check.name("model") + " gpt)";
  check.require(c.optimizer != OptimizerKind::SGD, "optimizer", "'sgd' is not one of adam, adamw " + gpt);
  check.require(c.schedule != Schedule::Kind::Step, "schedule", "'step' is not one of cosine, constant " + gpt);
  check.within("layers", c.layers, 1, 48);
  check.within("heads", c.heads, 1, 64);
  check.within("width", c.width, 1, 1024);
  check.require(heads_split_width(static_cast<arma::uword>(c.width), static_cast<arma::uword>(c.heads)), "width",
                std::to_string(c.width) + " must be a multiple of " + check.name("heads") + " " + std::to_string(c.heads));
  check.within("context", c.context, 1, 1024);
  check.within("warmup", c.warmup, 0, 1000000000);
  check.require(c.dropout >= 0 && c.dropout < 1, "dropout", "must be in [0, 1), got " + ag::format_number(c.dropout));
  check.require(c.norm != Norm::BatchNorm, "norm", "batchnorm: a GPT's norm is layernorm or rmsnorm " + gpt);
  check.require(c.norm != Norm::None, "norm",
                "none: a GPT's norm is layernorm or rmsnorm (for no norm: " + check.name("placement") + " none)");
}

void check_mlp(const RunConfig& c, const Checker& check) {
  for (arma::uword h : c.hidden) check.require(h >= 1 && h <= 999999, "hidden", "sizes must be from 1 to 999999");
  check.require(std::isfinite(c.init_scale) && c.init_scale > 0 && c.init_scale <= 1000, "init_scale",
                "must be above 0 and at most 1000, got " + ag::format_number(c.init_scale));
  check.within("steps", c.steps, 0, 1000000000);
  check.require(c.norm != Norm::BatchNorm || c.impl == Impl::Composed, "impl",
                "fused: batchnorm has one implementation, composed");
  check.require(c.norm != Norm::BatchNorm || c.batch_size >= 2, "batch_size",
                "must be at least 2 with batchnorm (a batch of one sample has no variance), got " + std::to_string(c.batch_size));
  check.require(c.placement != Placement::None, "placement",
                "none: an MLP's norm goes pre (before each activation) or post (after it); for no norm: " +
                    check.name("norm") + " none");
  if (c.generated.points) check.within("points", *c.generated.points, 4, kMaxGeneratedPoints);
  if (c.generated.noise) {
    check.require(*c.generated.noise >= 0 && *c.generated.noise <= kMaxNoise, "noise",
                  "must be from 0 to " + ag::format_number(kMaxNoise) + ", got " + ag::format_number(*c.generated.noise));
  }
}

}  // namespace

void RunConfig::validate(const Spell& spell) const {
  const Checker check{spell};
  check_optimisation(*this, check);
  check_loop(*this, check);
  if (model == ModelKind::Gpt) {
    check_gpt(*this, check);
    return;
  }
  check_mlp(*this, check);
}

std::unique_ptr<Optimizer> make_optimizer(const RunConfig& c, std::vector<Parameter*> params, double lr) {
  if (c.optimizer == OptimizerKind::SGD) {
    return std::make_unique<SGD>(std::move(params), SgdOptions{lr, c.momentum, c.weight_decay});
  }
  AdamOptions adam;
  adam.lr = lr;
  adam.beta2 = c.beta2;
  adam.weight_decay = c.weight_decay;
  if (c.optimizer == OptimizerKind::AdamW) return std::make_unique<AdamW>(std::move(params), adam);
  return std::make_unique<Adam>(std::move(params), adam);
}

bool schedule_in_steps(const RunConfig& c) { return c.model == ModelKind::Gpt; }

Schedule make_schedule(const RunConfig& c, long long total_steps) {
  Schedule s;
  s.kind = c.schedule;
  s.lr = c.lr;
  if (!schedule_in_steps(c)) {
    s.step_size = static_cast<int>(std::max(1LL, c.epochs / 3));  // x0.1 every third of the run
    s.warmup = c.warmup;
    s.end = c.epochs;
    return s;
  }
  s.step_size = static_cast<int>(std::max(1LL, total_steps / 3));
  s.warmup = std::min<long long>(c.warmup, total_steps / 2);
  s.end = total_steps - 1;
  s.min_lr = c.lr / 10;
  return s;
}

int shard_threads(const RunConfig& c) {
  // Dropout draws from the blocks' own streams as they run: one thread keeps their order.
  if (c.model == ModelKind::Gpt && c.dropout > 0) return 1;
  return c.threads > 0 ? static_cast<int>(c.threads) : default_threads();
}

}  // namespace ag
