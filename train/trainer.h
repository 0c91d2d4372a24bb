// The one training loop, nanoGPT's train.py in C++: for every batch of every
// epoch, set the learning rate, cut the batch into shards, and on each shard's
// tape (cleared) record the forward pass and the loss and run the backward;
// then add the shards' gradients, clip, and take the optimizer's step. Every
// few steps, evaluate. What is trained is a TrainingTask (train/task.h); how, a
// RunConfig (train/config.h).
//
// Every random draw comes from ag::Rng streams derived from config.seed (the
// task draws the split, the weights and dropout; the loop the batch order,
// stream 4), so the same config gives bit-identical losses on every run and
// on any number of threads.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "train/config.h"
#include "train/metrics.h"
#include "train/task.h"

namespace ag {

struct StepInfo {
  long long epoch, epochs;
  std::size_t step, steps;   // 1-based step within the epoch
  double loss, accuracy;     // running means over the epoch so far (accuracy NaN without classes)
};

// Progress (a bar), metrics (row 0 before the first step, then a row per
// evaluation) and checkpoints (after the last evaluation, with the trained
// task). Each may be empty.
struct TrainCallbacks {
  std::function<void(const StepInfo&)> on_step;
  std::function<void(const Metrics&)> on_eval;
  std::function<void(TrainingTask&, const Metrics&)> on_checkpoint;
};

// The loss went NaN or infinite: the message names the epoch and the step.
struct TrainingDiverged : Error {
  using Error::Error;
};

// Steps in the whole run: ceil(train size / batch size) per epoch.
long long total_steps(const RunConfig& config, std::size_t train_size);
// Where the evaluations are: the x of each point of the curves.
TimeAxis axis_of(const RunConfig& config);
// The x of the last point: the epochs, or the steps when the axis is steps.
long long last_x(const RunConfig& config, std::size_t train_size);

// One run a step at a time: what train() loops over, and what a program that
// trains in slices (the training page) keeps between its calls. It holds a copy
// of the config and a reference to the task, which must outlive it.
class Trainer {
 public:
  // Validates the config (ConfigError) and evaluates the untrained model (row 0's validation loss).
  Trainer(const RunConfig& config, TrainingTask& task, TrainCallbacks callbacks = {});
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // The epochs are over, or config.steps steps were taken.
  bool done() const;
  // One optimizer step on the next batch, and an evaluation when one is due.
  // Throws TrainingDiverged for a NaN/inf loss, before the weights change.
  void step();
  long long steps() const;
  const std::vector<Metrics>& history() const;
  const RunConfig& config() const { return config_; }
  // The run is over: on_checkpoint with the trained task and the last evaluation.
  void finish();

 private:
  class Loop;
  RunConfig config_;
  std::unique_ptr<Loop> loop_;
};

// Trains `task` as `config` says (config.validate() first); returns a row per evaluation.
// Throws ConfigError for a bad config, TrainingDiverged for a NaN/inf loss.
std::vector<Metrics> train(const RunConfig& config, TrainingTask& task, const TrainCallbacks& callbacks = {});

}  // namespace ag
