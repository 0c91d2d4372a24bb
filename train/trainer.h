// The training loop: data, model and optimizer from one TrainConfig; one tape,
// cleared and reused for every step; metrics per epoch.
//
// Every random draw comes from ag::Rng streams derived from config.seed (the
// split, the initial weights, the batch order), so the same config gives
// bit-identical losses and accuracies on every run.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "data/datasets.h"
#include "nn/mlp.h"
#include "nn/schedule.h"

namespace ag {

struct TrainConfig {
  std::string dataset = "moons";          // a name from dataset_names() or FILE.csv
  std::string label_column;               // CSV only: name or 1-based number; empty = last
  std::vector<arma::uword> hidden{64, 64};
  Norm norm = Norm::None;
  Impl impl = Impl::Composed;
  Activation activation = Activation::ReLU;
  std::string optimizer = "adam";         // sgd, adam, adamw
  double lr = 1e-3;
  double momentum = 0.9;                  // sgd
  double weight_decay = 0.0;
  Schedule::Kind schedule = Schedule::Kind::Constant;
  double clip = 0.0;                      // gradient-norm clipping; 0 = off
  int epochs = 20;
  arma::uword batch_size = 32;
  std::uint64_t seed = 0;
  double validation_fraction = 0.2;
  int threads = 0;                        // a batch of more than 64 rows runs in shards on this many
                                          // threads; 0 = the machine's cores. Same bits for any number.
};

struct EpochMetrics {
  int epoch = 0;             // 1-based
  double train_loss = 0;     // mean over the epoch's steps, weighted by batch size
  double val_loss = 0;       // after the epoch, on the whole validation set
  double train_accuracy = 0; // NaN for regression
  double val_accuracy = 0;
  double seconds = 0;        // since training started (the one column that is not reproducible)
};

struct StepInfo {
  int epoch, epochs;
  std::size_t step, steps;   // 1-based step within the epoch
  double loss, accuracy;     // running means over the epoch so far
};

struct TrainCallbacks {
  std::function<void(const StepInfo&)> on_step;
  std::function<void(const EpochMetrics&)> on_epoch;
};

// The loss went NaN or infinite: the message names the epoch and the step.
struct TrainingDiverged : Error {
  using Error::Error;
};

struct Evaluation {
  double loss = 0;
  double accuracy = 0;  // NaN for regression
};

// A model for the data: sizes = features, hidden..., classes (or 1 for regression).
MlpSpec model_spec(const TrainConfig& config, const Dataset& data);
// Throws DataError, before anything is allocated, when the model and its
// activations would need more than 4 GiB (`--hidden 999999,999999`); train() calls it.
void check_model_size(const TrainConfig& config, const Dataset& data);

// Loss and accuracy of `model` on all of `data`, recorded on `tape` without gradients.
Evaluation evaluate(Sequential& model, const Dataset& data, Tape& tape);

struct TrainRun {
  Split split;
  MlpSpec spec;
  Sequential model;
  std::vector<EpochMetrics> history;
};

// Loads and splits the data, builds the model, trains it. Throws Error for a
// bad config, DataError for bad data, TrainingDiverged for a NaN/inf loss.
TrainRun train(const TrainConfig& config, const TrainCallbacks& callbacks = {});

// The "key=value" lines a checkpoint's metadata holds, and back.
std::string describe_run(const TrainConfig& config, const MlpSpec& spec);
struct RunDescription {
  TrainConfig config;
  MlpSpec spec;
};
// Throws DataError for a field that is missing or does not parse in full
// (seed=-1, validation_fraction=0.2junk or 5 are refused).
RunDescription parse_run_description(const std::string& text, const std::string& path);
// Throws DataError unless every layer size in `run` matches a weight record of
// `ckpt`: call it before building the model, so the file's own records bound
// what is allocated.
struct Checkpoint;
void check_description_against_records(const RunDescription& run, const Checkpoint& ckpt, const std::string& path);

}  // namespace ag
