// What the one trainer (train/trainer.h) trains: a task gives it batches to
// draw, the loss of a piece of a batch, an evaluation and a description. It is
// implemented once for tables (train/table_task.h: an MLP on a dataset of
// numbers) and once for text (train/text_task.h: a GPT on lines of text).
// A task also says what a program prints, plots and saves about its model, so
// a program holds one task and never asks which model it is (train/tasks.h).
#pragma once

#include <armadillo>

#include <cstddef>
#include <string>
#include <vector>

#include "autograd/parameter.h"
#include "autograd/tape.h"
#include "train/metrics.h"
#include "train/plot.h"

namespace ag {

class ShardRunner;

struct Evaluation {
  double loss = 0;
  double accuracy = 0;  // NaN for regression and for text
};

class TrainingTask {
 public:
  virtual ~TrainingTask() = default;

  // The samples (table rows, text sequences) that batches are drawn from, 0 .. size - 1.
  virtual std::size_t train_size() const = 0;
  // Samples per shard: a batch is cut into shards of at most this many (train/shards.h).
  virtual std::size_t shard_size() const = 0;
  // What a shard's mean loss is a mean over (rows, or target characters): its share of the batch.
  virtual double weight(const arma::uvec& samples) const = 0;
  // Records the forward pass and the mean loss of `samples` on `tape`; adds to `correct`
  // the shard's correct predictions (classes only).
  virtual Var loss(Tape& tape, const arma::uvec& samples, double& correct) = 0;
  // True when the task counts correct predictions (the accuracy columns).
  virtual bool classifies() const = 0;

  // The loss (and accuracy) on the validation set, without gradients; may use the runner's threads.
  virtual Evaluation evaluate(ShardRunner& shards) = 0;

  virtual std::vector<Parameter*> parameters() = 0;
  // What evaluation uses that no gradient trains (checkpoints save it after the parameters).
  virtual std::vector<Statistic> statistics() { return {}; }
  // The model, in one line ("GPT(4 layers, width 64, ...)").
  virtual std::string describe() const = 0;

  // Printed before training: the data and any baseline to beat, whole lines ("" for none).
  virtual std::string data_summary() const = 0;
  // Printed after: the model, its size and how the last evaluation of `history` did.
  virtual std::string result_summary(const std::vector<Metrics>& history) = 0;
  // The plot's title, and how its curves are drawn.
  virtual std::string title() const = 0;
  virtual PlotStyle plot_style() const = 0;
  // What the checkpoint records about the model besides its weights (train/model_description.h).
  virtual std::string checkpoint_description() const = 0;
};

}  // namespace ag
