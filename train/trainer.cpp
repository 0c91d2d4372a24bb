#include "train/trainer.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cmath>
#include <limits>
#include <memory>

#include "autograd/memory.h"
#include "autograd/error.h"
#include "ops/losses.h"
#include "nn/optim.h"
#include "train/shards.h"

namespace ag {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::size_t kShardRows = 64;  // rows per shard of a batch: below that, threads cost more than they save

void validate(const TrainConfig& c) {
  if (c.epochs < 1) throw Error("train: epochs must be at least 1, got " + std::to_string(c.epochs));
  if (c.batch_size < 1) throw Error("train: the batch size must be at least 1");
  if (!(c.lr > 0) || !std::isfinite(c.lr)) throw Error("train: the learning rate must be a positive number");
  if (!(c.validation_fraction >= 0 && c.validation_fraction < 1)) {
    throw Error("train: the validation fraction must be in [0, 1)");
  }
  for (arma::uword h : c.hidden) {
    if (h == 0) throw Error("train: hidden layer sizes must be positive");
  }
}

std::unique_ptr<Optimizer> make_optimizer(const TrainConfig& c, std::vector<Parameter*> params) {
  if (c.optimizer == "sgd") return std::make_unique<SGD>(std::move(params), SgdOptions{c.lr, c.momentum, c.weight_decay});
  AdamOptions adam;
  adam.lr = c.lr;
  adam.weight_decay = c.weight_decay;
  if (c.optimizer == "adam") return std::make_unique<Adam>(std::move(params), adam);
  if (c.optimizer == "adamw") return std::make_unique<AdamW>(std::move(params), adam);
  throw Error("train: unknown optimizer '" + c.optimizer + "' (expected sgd, adam or adamw)");
}

// The batch's loss: cross-entropy for classes, mean squared error for values.
Var batch_loss(Var out, const Dataset& data, const arma::uvec& labels, const arma::mat& targets) {
  return data.task == Task::Classification ? softmax_cross_entropy(out, labels) : mse(out, targets);
}

struct EpochContext {
  Sequential& model;
  Optimizer& optimizer;
  const Dataset& train;
  ShardRunner& shards;
  double clip;
  const TrainCallbacks& callbacks;
};

struct StepResult {
  double loss = 0, correct = 0;  // the batch's mean loss; its correct predictions (classes)
};

// One step on the batch `rows`, cut into shards of kShardRows (train/shards.h).
// Shard k's loss is its mean, so its backward is seeded with its share n_k / n.
StepResult train_step(EpochContext& ctx, const arma::uvec& rows) {
  const bool classify = ctx.train.task == Task::Classification;
  const std::vector<arma::uvec> shards = cut_into_shards(rows, kShardRows);
  const double n = static_cast<double>(rows.n_elem);
  std::vector<StepResult> results(shards.size());
  ctx.shards.run(shards.size(), [&](std::size_t k, Tape& tape) {
    const arma::uvec labels = classify ? ctx.train.labels(shards[k]) : arma::uvec();
    const arma::mat targets = classify ? arma::mat() : arma::mat(ctx.train.y.rows(shards[k]));
    Var out = ctx.model(tape.constant(ctx.train.x.rows(shards[k]), "x"));
    Var loss = batch_loss(out, ctx.train, labels, targets);
    const double share = static_cast<double>(shards[k].n_elem) / n;
    results[k].loss = loss.value()(0);
    if (classify) results[k].correct = accuracy(out.value(), labels) * static_cast<double>(shards[k].n_elem);
    if (std::isfinite(results[k].loss)) tape.backward(loss, arma::mat(1, 1, arma::fill::value(share)));
  });
  StepResult step;
  for (std::size_t k = 0; k < shards.size(); ++k) {
    step.loss += results[k].loss * static_cast<double>(shards[k].n_elem) / n;
    step.correct += results[k].correct;
  }
  if (std::isfinite(step.loss)) {
    ctx.optimizer.zero_grad();
    ctx.shards.add_param_grads(shards.size());
    if (ctx.clip > 0) clip_grad_norm(ctx.model.parameters(), ctx.clip);
    ctx.optimizer.step();
  }
  return step;
}

// One pass over the shuffled training set; returns the running loss and accuracy.
Evaluation run_epoch(EpochContext& ctx, const std::vector<arma::uvec>& batches, int epoch, int epochs) {
  double loss_sum = 0, correct = 0;
  arma::uword seen = 0;
  const bool classify = ctx.train.task == Task::Classification;
  for (std::size_t s = 0; s < batches.size(); ++s) {
    const arma::uvec& rows = batches[s];
    const StepResult step = train_step(ctx, rows);
    if (!std::isfinite(step.loss)) {
      throw TrainingDiverged("the loss became " + std::string(std::isnan(step.loss) ? "NaN" : "infinite") +
                             " at epoch " + std::to_string(epoch) + ", step " + std::to_string(s + 1) + " of " +
                             std::to_string(batches.size()) + " (try a smaller learning rate)");
    }
    loss_sum += step.loss * static_cast<double>(rows.n_elem);
    correct += step.correct;
    seen += rows.n_elem;
    if (ctx.callbacks.on_step) {
      const double n = static_cast<double>(seen);
      ctx.callbacks.on_step({epoch, epochs, s + 1, batches.size(), loss_sum / n, classify ? correct / n : kNaN});
    }
  }
  const double n = static_cast<double>(seen);
  return {loss_sum / n, classify ? correct / n : kNaN};
}

}  // namespace

MlpSpec model_spec(const TrainConfig& config, const Dataset& data) {
  MlpSpec spec;
  spec.sizes.push_back(data.features());
  for (arma::uword h : config.hidden) spec.sizes.push_back(h);
  spec.sizes.push_back(data.task == Task::Classification ? data.classes : 1);
  spec.norm = config.norm;
  spec.impl = config.impl;
  spec.activation = config.activation;
  spec.init = config.activation == Activation::Tanh ? Init::Xavier : Init::Kaiming;
  return spec;
}

namespace {
constexpr double kMaxModelBytes = 4.0 * (1ULL << 30);  // 4 GiB: far above any model a lesson trains
}  // namespace

// Refuses, before anything is allocated, a model whose memory would not fit:
// `--hidden 999999,999999` must be a message, not std::bad_alloc. The estimate
// is rough on purpose: each parameter's value, gradient and two Adam moments,
// and for the largest batch a handful of rows x width matrices per layer
// (values, gradients, the norms' intermediates).
void check_model_size(const TrainConfig& config, const Dataset& data) {
  const MlpSpec spec = model_spec(config, data);
  // The most rows one forward pass sees: a batch, or the whole validation set.
  const double n = static_cast<double>(data.size());
  const double rows = std::max(std::min(static_cast<double>(config.batch_size), n), std::ceil(config.validation_fraction * n));
  double params = 0, widths = 0;
  std::string shape;
  for (std::size_t i = 0; i < spec.sizes.size(); ++i) {
    const double out = static_cast<double>(spec.sizes[i]);
    widths += out;
    shape += (i ? "-" : "") + std::to_string(spec.sizes[i]);
    if (i == 0) continue;
    params += static_cast<double>(spec.sizes[i - 1]) * out + out;  // weight and bias
    if (i + 1 < spec.sizes.size() && spec.norm != Norm::None) params += 2 * out;
  }
  const double bytes = 8.0 * (4.0 * params + 10.0 * rows * widths);
  if (bytes <= kMaxModelBytes) return;
  char line[200];
  std::snprintf(line, sizeof line, "needs about %.1f GiB of memory (%.4g parameters, %.0f rows at a time); the limit is %.0f GiB",
                bytes / (1ULL << 30), params, rows, kMaxModelBytes / (1ULL << 30));
  throw DataError("the model " + shape + " " + line + ": use smaller hidden layer sizes (--hidden)");
}

Evaluation evaluate(Sequential& model, const Dataset& data, Tape& tape) {
  if (data.size() == 0) return {kNaN, kNaN};
  tape.clear();
  NoGrad no_grad(tape);
  Var out = model(tape.constant(data.x, "x"));
  if (data.task == Task::Regression) return {mse(out, data.y).value()(0), kNaN};
  const arma::uvec labels = data.labels();
  return {softmax_cross_entropy(out, labels).value()(0), accuracy(out.value(), labels)};
}

TrainRun train(const TrainConfig& config, const TrainCallbacks& callbacks) {
  validate(config);
  use_memory_policy();  // every step frees and reallocates its matrices: keep the pages (autograd/memory.h)
  const Dataset data = make_dataset(config.dataset, config.seed, config.label_column);
  TrainRun run;
  Rng split_rng(derive_seed(config.seed, 2));
  run.split = train_validation_split(data, config.validation_fraction, split_rng);
  if (run.split.train.size() == 0) throw DataError(config.dataset + ": no samples left to train on");
  run.spec = model_spec(config, data);
  check_model_size(config, data);
  Rng init_rng(derive_seed(config.seed, 3));
  run.model = make_mlp(run.spec, init_rng);
  std::unique_ptr<Optimizer> optimizer = make_optimizer(config, run.model.parameters());
  Schedule schedule;
  schedule.kind = config.schedule;
  schedule.lr = config.lr;
  schedule.epochs = config.epochs;
  schedule.step_size = std::max(1, config.epochs / 3);

  Rng batch_rng(derive_seed(config.seed, 4));
  ShardRunner shards(config.threads > 0 ? config.threads : default_threads());
  Tape eval_tape;
  EpochContext ctx{run.model, *optimizer, run.split.train, shards, config.clip, callbacks};
  const auto start = std::chrono::steady_clock::now();
  for (int epoch = 1; epoch <= config.epochs; ++epoch) {
    optimizer->set_lr(schedule.at(epoch - 1));
    const std::vector<arma::uvec> batches = shuffled_batches(run.split.train.size(), config.batch_size, batch_rng);
    const Evaluation fit = run_epoch(ctx, batches, epoch, config.epochs);
    const Evaluation val = evaluate(run.model, run.split.validation, eval_tape);
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    run.history.push_back({epoch, fit.loss, val.loss, fit.accuracy, val.accuracy, elapsed.count()});
    if (callbacks.on_epoch) callbacks.on_epoch(run.history.back());
  }
  return run;
}

}  // namespace ag
