#include "train/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>

#include "data/datasets.h"
#include "train/shards.h"

namespace ag {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct StepResult {
  double loss = 0;     // the batch's mean loss
  double weight = 0;   // what it is a mean over (rows, targets)
  double correct = 0;  // its correct predictions (classes)
};

// Sums of loss x weight, weight and correct predictions, from a point on.
struct Running {
  double loss = 0, weight = 0, correct = 0;
  void add(const StepResult& s) {
    loss += s.loss * s.weight;
    weight += s.weight;
    correct += s.correct;
  }
  double mean_loss() const { return loss / weight; }
  double accuracy(bool classifies) const { return classifies ? correct / weight : kNaN; }
};

class Loop {
 public:
  Loop(const RunConfig& config, TrainingTask& task, const TrainCallbacks& callbacks)
      : config_(config),
        task_(task),
        callbacks_(callbacks),
        shards_(shard_threads(config)),
        per_epoch_((task.train_size() + static_cast<std::size_t>(config.batch_size) - 1) /
                   static_cast<std::size_t>(config.batch_size)),
        schedule_(make_schedule(config, static_cast<long long>(per_epoch_) * config.epochs)),
        optimizer_(make_optimizer(config, task.parameters(), schedule_.at(0))) {}

  std::vector<Metrics> run();

 private:
  StepResult step(const arma::uvec& batch);
  void epoch(long long e, const std::vector<arma::uvec>& batches);
  void evaluate(long long e, std::size_t s, std::size_t steps);
  void record_step_zero(const StepResult& first);

  const RunConfig& config_;
  TrainingTask& task_;
  const TrainCallbacks& callbacks_;
  ShardRunner shards_;
  std::size_t per_epoch_;
  Schedule schedule_;  // the learning rate's one source: config.lr is read by it alone
  std::unique_ptr<Optimizer> optimizer_;
  long long steps_ = 0;
  Running interval_;  // since the last evaluation: a point's train loss
  Evaluation initial_;         // the validation set before the first step: row 0's
  double initial_seconds_ = 0;
  std::vector<Metrics> history_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// One step on `batch`, cut into shards of task.shard_size() (train/shards.h).
// Shard k's loss is its mean, so its backward is seeded with its share w_k / w.
StepResult Loop::step(const arma::uvec& batch) {
  const std::vector<arma::uvec> shards = cut_into_shards(batch, task_.shard_size());
  StepResult result;
  std::vector<double> weights(shards.size()), losses(shards.size()), correct(shards.size());
  for (std::size_t k = 0; k < shards.size(); ++k) result.weight += weights[k] = task_.weight(shards[k]);
  shards_.run(shards.size(), [&](std::size_t k, Tape& tape) {
    Var loss = task_.loss(tape, shards[k], correct[k]);
    losses[k] = loss.value()(0);
    if (std::isfinite(losses[k])) tape.backward(loss, arma::mat(1, 1, arma::fill::value(weights[k] / result.weight)));
  });
  for (std::size_t k = 0; k < shards.size(); ++k) {
    result.loss += losses[k] * weights[k] / result.weight;
    result.correct += correct[k];
  }
  if (!std::isfinite(result.loss)) return result;
  optimizer_->zero_grad();
  shards_.add_param_grads(shards.size());
  if (config_.clip > 0) clip_grad_norm(task_.parameters(), config_.clip);
  optimizer_->step();
  return result;
}

// The evaluations are spread evenly over the epoch: after steps E/n, 2E/n, ..., E.
void Loop::epoch(long long e, const std::vector<arma::uvec>& batches) {
  const std::size_t evals = std::min<std::size_t>(static_cast<std::size_t>(config_.evals_per_epoch), per_epoch_);
  const bool classifies = task_.classifies();
  Running so_far;  // this epoch: the progress bar's
  for (std::size_t s = 0, next_eval = 1; s < batches.size(); ++s) {
    optimizer_->set_lr(schedule_.at(schedule_in_steps(config_) ? steps_ : e - 1));
    ++steps_;
    const StepResult r = step(batches[s]);
    if (!std::isfinite(r.loss)) {
      throw TrainingDiverged("the loss became " + std::string(std::isnan(r.loss) ? "NaN" : "infinite") + " at epoch " +
                             std::to_string(e) + ", step " + std::to_string(s + 1) + " of " +
                             std::to_string(batches.size()) + " (try a smaller learning rate)");
    }
    if (steps_ == 1) record_step_zero(r);
    so_far.add(r);
    interval_.add(r);
    if (callbacks_.on_step) {
      callbacks_.on_step({e, config_.epochs, s + 1, batches.size(), so_far.mean_loss(), so_far.accuracy(classifies)});
    }
    if (s + 1 != (next_eval * batches.size()) / evals) continue;
    ++next_eval;
    evaluate(e, s, batches.size());
  }
}

void Loop::evaluate(long long e, std::size_t s, std::size_t steps) {
  const Evaluation val = task_.evaluate(shards_);
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start_;
  const double epoch = static_cast<double>(e - 1) + static_cast<double>(s + 1) / static_cast<double>(steps);
  const bool classifies = task_.classifies();
  history_.push_back({steps_, epoch, interval_.mean_loss(), val.loss, interval_.accuracy(classifies), val.accuracy,
                      elapsed.count()});
  interval_ = Running();
  if (callbacks_.on_eval) callbacks_.on_eval(history_.back());
}

// Row 0, the loss before any step (makemore's first check, against log V): the
// validation set's, and the first batch's at the initial weights (that step's
// forward, so no batch is drawn twice and no random stream moves). Its on_eval
// comes once that first step has run, before the step's on_step.
void Loop::record_step_zero(const StepResult& first) {
  const double accuracy = task_.classifies() ? first.correct / first.weight : kNaN;
  history_.push_back({0, 0.0, first.loss, initial_.loss, accuracy, initial_.accuracy, initial_seconds_});
  if (callbacks_.on_eval) callbacks_.on_eval(history_.back());
}

std::vector<Metrics> Loop::run() {
  Rng batch_rng(derive_seed(config_.seed, 4));
  start_ = std::chrono::steady_clock::now();
  initial_ = task_.evaluate(shards_);
  initial_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  for (long long e = 1; e <= config_.epochs; ++e) {
    const arma::uword n = task_.train_size(), batch = static_cast<arma::uword>(config_.batch_size);
    epoch(e, shuffled_batches(n, batch, batch_rng));
  }
  if (callbacks_.on_checkpoint && !history_.empty()) callbacks_.on_checkpoint(task_, history_.back());
  return history_;
}

}  // namespace

long long total_steps(const RunConfig& config, std::size_t train_size) {
  const std::size_t batch = static_cast<std::size_t>(std::max(1LL, config.batch_size));
  return static_cast<long long>((train_size + batch - 1) / batch) * config.epochs;
}

TimeAxis axis_of(const RunConfig& config) { return schedule_in_steps(config) ? TimeAxis::Step : TimeAxis::Epoch; }

long long last_x(const RunConfig& config, std::size_t train_size) {
  return axis_of(config) == TimeAxis::Step ? total_steps(config, train_size) : config.epochs;
}

std::vector<Metrics> train(const RunConfig& config, TrainingTask& task, const TrainCallbacks& callbacks) {
  config.validate();
  if (task.train_size() == 0) throw Error("train: no samples to train on");
  Loop loop(config, task, callbacks);
  return loop.run();
}

}  // namespace ag
