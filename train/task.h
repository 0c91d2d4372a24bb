// What the one trainer (train/trainer.h) trains: a task gives it batches to
// draw, the loss of a piece of a batch, an evaluation and a description. It is
// implemented once for tables (train/table_task.h: an MLP on a dataset of
// numbers) and once for text (train/text_task.h: a GPT on lines of text).
#pragma once

#include <armadillo>

#include <cstddef>
#include <string>
#include <vector>

#include "autograd/parameter.h"
#include "autograd/tape.h"

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
  // The model, in one line ("GPT(4 layers, width 64, ...)").
  virtual std::string describe() const = 0;
};

}  // namespace ag
