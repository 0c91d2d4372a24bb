#include "train/trainer.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cmath>
#include <limits>
#include <memory>

#include "data/csv.h"
#include "ops/losses.h"
#include "nn/optim.h"

namespace ag {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

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
  Tape& tape;
  double clip;
  const TrainCallbacks& callbacks;
};

// One pass over the shuffled training set; returns the running loss and accuracy.
Evaluation run_epoch(EpochContext& ctx, const std::vector<arma::uvec>& batches, int epoch, int epochs) {
  double loss_sum = 0, correct = 0;
  arma::uword seen = 0;
  const bool classify = ctx.train.task == Task::Classification;
  for (std::size_t s = 0; s < batches.size(); ++s) {
    const arma::uvec& rows = batches[s];
    const arma::uvec labels = classify ? ctx.train.labels(rows) : arma::uvec();
    const arma::mat targets = classify ? arma::mat() : arma::mat(ctx.train.y.rows(rows));
    ctx.tape.clear();  // one tape for the whole run: cleared, not reallocated
    Var out = ctx.model(ctx.tape.constant(ctx.train.x.rows(rows), "x"));
    Var loss = batch_loss(out, ctx.train, labels, targets);
    const double value = loss.value()(0);
    if (!std::isfinite(value)) {
      throw TrainingDiverged("the loss became " + std::string(std::isnan(value) ? "NaN" : "infinite") +
                             " at epoch " + std::to_string(epoch) + ", step " + std::to_string(s + 1) + " of " +
                             std::to_string(batches.size()) + " (try a smaller learning rate)");
    }
    ctx.optimizer.zero_grad();
    ctx.tape.backward(loss);
    if (ctx.clip > 0) clip_grad_norm(ctx.model.parameters(), ctx.clip);
    ctx.optimizer.step();
    loss_sum += value * static_cast<double>(rows.n_elem);
    if (classify) correct += accuracy(out.value(), labels) * static_cast<double>(rows.n_elem);
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
  Tape tape, eval_tape;
  EpochContext ctx{run.model, *optimizer, run.split.train, tape, config.clip, callbacks};
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
