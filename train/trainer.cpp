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

}  // namespace

// A run's state between steps: the epoch's batches and where it is in them.
class Trainer::Loop {
 public:
  Loop(const RunConfig& config, TrainingTask& task, TrainCallbacks callbacks)
      : config_(config),
        task_(task),
        callbacks_(std::move(callbacks)),
        shards_(shard_threads(config)),
        per_epoch_((task.train_size() + static_cast<std::size_t>(config.batch_size) - 1) /
                   static_cast<std::size_t>(config.batch_size)),
        schedule_(make_schedule(config, static_cast<long long>(per_epoch_) * config.epochs)),
        optimizer_(make_optimizer(config, task.parameters(), schedule_.at(0))),
        batch_rng_(derive_seed(config.seed, 4)) {
    initial_ = task_.evaluate(shards_);
    initial_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

  bool done() const {
    if (config_.steps > 0) return steps_ >= config_.steps;
    return epoch_ == config_.epochs && next_ == batches_.size();
  }
  void next_step();
  void finish() {
    if (callbacks_.on_checkpoint && !history_.empty()) callbacks_.on_checkpoint(task_, history_.back());
  }

  long long steps_ = 0;
  std::vector<Metrics> history_;

 private:
  StepResult step(const arma::uvec& batch);
  void evaluate(long long e, std::size_t s, std::size_t steps);
  void record_step_zero(const StepResult& first);

  const RunConfig& config_;
  TrainingTask& task_;
  TrainCallbacks callbacks_;
  ShardRunner shards_;
  std::size_t per_epoch_;
  Schedule schedule_;  // the learning rate's one source: config.lr is read by it alone
  std::unique_ptr<Optimizer> optimizer_;
  Rng batch_rng_;  // stream 4: the batch order
  long long epoch_ = 0;             // 1-based once the first step ran
  std::vector<arma::uvec> batches_;  // this epoch's
  std::size_t next_ = 0;             // the next batch of the epoch
  std::size_t next_eval_ = 1;
  Running so_far_;    // this epoch: the progress bar's
  Running interval_;  // since the last evaluation: a point's train loss
  Evaluation initial_;         // the validation set before the first step: row 0's
  double initial_seconds_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// One step on `batch`, cut into shards of task.shard_size() (train/shards.h).
// Shard k's loss is its mean, so its backward is seeded with its share w_k / w.
StepResult Trainer::Loop::step(const arma::uvec& batch) {
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

// The next batch, starting an epoch when the last one is used up. The
// evaluations are spread evenly over the epoch: after steps E/n, 2E/n, ..., E;
// a run of --steps also evaluates after its last step.
void Trainer::Loop::next_step() {
  if (next_ == batches_.size()) {
    ++epoch_;
    batches_ = shuffled_batches(task_.train_size(), static_cast<arma::uword>(config_.batch_size), batch_rng_);
    next_ = 0;
    next_eval_ = 1;
    so_far_ = Running();
  }
  const std::size_t s = next_++, n = batches_.size();
  optimizer_->set_lr(schedule_.at(schedule_in_steps(config_) ? steps_ : epoch_ - 1));
  ++steps_;
  const StepResult r = step(batches_[s]);
  if (!std::isfinite(r.loss)) {
    throw TrainingDiverged("the loss became " + std::string(std::isnan(r.loss) ? "NaN" : "infinite") + " at epoch " +
                           std::to_string(epoch_) + ", step " + std::to_string(s + 1) + " of " + std::to_string(n) +
                           " (try a smaller learning rate)");
  }
  if (steps_ == 1) record_step_zero(r);
  so_far_.add(r);
  interval_.add(r);
  const bool classifies = task_.classifies();
  if (callbacks_.on_step) callbacks_.on_step({epoch_, config_.epochs, s + 1, n, so_far_.mean_loss(), so_far_.accuracy(classifies)});
  const std::size_t evals = std::min<std::size_t>(static_cast<std::size_t>(config_.evals_per_epoch), per_epoch_);
  if (s + 1 == (next_eval_ * n) / evals) {
    ++next_eval_;
    evaluate(epoch_, s, n);
  } else if (config_.steps > 0 && steps_ == config_.steps) {
    evaluate(epoch_, s, n);
  }
}

void Trainer::Loop::evaluate(long long e, std::size_t s, std::size_t steps) {
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
void Trainer::Loop::record_step_zero(const StepResult& first) {
  const double accuracy = task_.classifies() ? first.correct / first.weight : kNaN;
  history_.push_back({0, 0.0, first.loss, initial_.loss, accuracy, initial_.accuracy, initial_seconds_});
  if (callbacks_.on_eval) callbacks_.on_eval(history_.back());
}

Trainer::Trainer(const RunConfig& config, TrainingTask& task, TrainCallbacks callbacks) : config_(config) {
  config_.validate();
  if (task.train_size() == 0) throw Error("train: no samples to train on");
  loop_ = std::make_unique<Loop>(config_, task, std::move(callbacks));
}

Trainer::~Trainer() = default;

bool Trainer::done() const { return loop_->done(); }
void Trainer::step() { loop_->next_step(); }
long long Trainer::steps() const { return loop_->steps_; }
const std::vector<Metrics>& Trainer::history() const { return loop_->history_; }
void Trainer::finish() { loop_->finish(); }

long long total_steps(const RunConfig& config, std::size_t train_size) {
  const std::size_t batch = static_cast<std::size_t>(std::max(1LL, config.batch_size));
  return static_cast<long long>((train_size + batch - 1) / batch) * config.epochs;
}

TimeAxis axis_of(const RunConfig& config) { return schedule_in_steps(config) ? TimeAxis::Step : TimeAxis::Epoch; }

long long last_x(const RunConfig& config, std::size_t train_size) {
  return axis_of(config) == TimeAxis::Step ? total_steps(config, train_size) : config.epochs;
}

std::vector<Metrics> train(const RunConfig& config, TrainingTask& task, const TrainCallbacks& callbacks) {
  Trainer trainer(config, task, callbacks);
  while (!trainer.done()) trainer.step();
  trainer.finish();
  return trainer.history();
}

}  // namespace ag
