// The task for tables (train/task.h, TrainingTask): an MLP on a dataset of numbers
// (data/datasets.h), classes scored by cross-entropy and accuracy, values by
// mean squared error. The data is loaded by the caller and handed in.
#pragma once

#include <algorithm>
#include <string>

#include "data/datasets.h"
#include "nn/mlp.h"
#include "train/config.h"
#include "train/task.h"

namespace ag {

// The MLP's table (config.dataset, config.label_column), loaded once and handed
// to the task, so an unknown name or a bad file fails before anything is
// written. Throws DataError, also for fewer than 2 samples.
Dataset load_table(const RunConfig& config);

// A model for the data: sizes = features, hidden..., classes (or 1 for regression).
MlpSpec model_spec(const RunConfig& config, const Dataset& data);
// Throws DataError, before anything is allocated, when the model and its
// activations would need more than 4 GiB (`--hidden 999999,999999`).
void check_model_size(const RunConfig& config, const Dataset& data);

// Loss and accuracy of `model` on all of `data`, recorded on `tape` without gradients.
Evaluation evaluate(Sequential& model, const Dataset& data, Tape& tape);

class TableTask : public TrainingTask {
 public:
  // Splits `data` (Rng stream 2 of config.seed), checks the model's size and builds it
  // (stream 3). Throws DataError for data with nothing left to train on.
  TableTask(const RunConfig& config, const Dataset& data);

  std::size_t train_size() const override { return split.train.size(); }
  // Rows: below 64, threads cost more than they save. A BatchNorm's statistics
  // are the whole batch's, so with one the batch is never cut.
  std::size_t shard_size() const override {
    return config.norm == Norm::BatchNorm ? std::max<std::size_t>(64, static_cast<std::size_t>(config.batch_size)) : 64;
  }
  double weight(const arma::uvec& rows) const override { return static_cast<double>(rows.n_elem); }
  Var loss(Tape& tape, const arma::uvec& rows, double& correct) override;
  bool classifies() const override { return split.train.task == Task::Classification; }
  Evaluation evaluate(ShardRunner& shards) override;
  std::vector<Parameter*> parameters() override { return model.parameters(); }
  std::vector<Statistic> statistics() override { return model.statistics(); }
  std::string describe() const override;
  std::string data_summary() const override { return ""; }
  std::string result_summary(const std::vector<Metrics>& history) override;
  std::string title() const override;
  PlotStyle plot_style() const override { return {}; }  // epochs, a log loss axis
  std::string checkpoint_description() const override;

  RunConfig config;
  Split split;
  MlpSpec spec;
  Sequential model;

 private:
  Tape eval_tape_;
};

}  // namespace ag
