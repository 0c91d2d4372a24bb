// Training a character-level GPT on lines of text (data/text.h), makemore-style:
// every line framed by the boundary token, a seeded split by line, Adam(W)
// with a linear warm-up and a cosine decay per step, and the validation loss
// in nats per character after every epoch, next to the bigram baseline scored
// on exactly the same targets.
//
// Every random draw comes from ag::Rng streams derived from config.seed (the
// split, the initial weights, the batch order, dropout), so the same config
// gives bit-identical losses on every run.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "data/text.h"
#include "nn/gpt.h"
#include "train/metrics.h"
#include "train/trainer.h"

namespace ag {

struct LmConfig {
  std::string dataset = "words";   // "words" or FILE.txt
  arma::uword layers = 4, heads = 4, width = 64, context = 32;
  Placement placement = Placement::Pre;
  Norm norm = Norm::LayerNorm;
  Impl impl = Impl::Composed;
  double dropout = 0.0;
  std::string optimizer = "adamw";  // adam or adamw
  double lr = 3e-3;                 // the peak, after warm-up
  double weight_decay = 0.01;
  bool cosine = true;               // warm-up then cosine down to lr / 10; false: constant lr
  int warmup = 200;                 // steps of linear warm-up (cosine only)
  double clip = 1.0;                // gradient-norm clipping; 0 = off
  int epochs = 2;
  int evals_per_epoch = 4;          // validation passes per epoch (the points of the curves)
  arma::uword batch_size = 32;      // sequences (lines) per step
  std::uint64_t seed = 0;
  double validation_fraction = 0.1;
  int threads = 0;                  // shards run on this many threads; 0 = the machine's cores.
                                    // The result is the same to the last bit for any number
                                    // (train/shards.h); with dropout, one thread.
};

// The learning rate at step (0-based) of `total`.
double lm_learning_rate(const LmConfig& config, long long step, long long total);

struct LmData {
  TextData text;
  TextSplit split;
  std::vector<Sequence> train, validation;
  double bigram_val_loss = 0;  // nats per character on `validation`'s targets
};
// Loads, splits (Rng stream 2 of the seed) and cuts the data; fits the bigram.
LmData prepare_lm_data(const LmConfig& config);

GptSpec gpt_spec(const LmConfig& config, arma::uword vocab);

// Mean cross-entropy per target of `sequences` (nats per character), without gradients.
double evaluate_lm(Gpt& model, const std::vector<Sequence>& sequences, Tape& tape);
// The same, its chunks of sequences on the runner's threads, added in chunk order: the same bits.
class ShardRunner;
double evaluate_lm(Gpt& model, const std::vector<Sequence>& sequences, ShardRunner& shards);

// One evaluation: after `step` steps (`epoch` passes over the training set).
struct LmPoint {
  long long step = 0;
  double epoch = 0;
  double train_loss = 0;  // mean per target over the steps since the last evaluation
  double val_loss = 0;    // on every validation target, nats per character
  double seconds = 0;     // since training started
};

struct LmCallbacks {
  std::function<void(const StepInfo&)> on_step;  // the progress bar (accuracy NaN)
  std::function<void(const LmPoint&)> on_eval;
};

struct LmRun {
  LmData data;
  GptSpec spec;
  std::unique_ptr<Gpt> model;
  std::vector<LmPoint> history;
};

// Builds the model and trains it on `data` (from prepare_lm_data(config)),
// evaluating evals_per_epoch times an epoch. Throws Error for a bad config,
// TrainingDiverged for a NaN/inf loss.
LmRun train_lm(const LmConfig& config, LmData data, const LmCallbacks& callbacks = {});

// "step,epoch,train_loss,val_loss,seconds", 17 significant digits; with a leading `run` column for several runs.
std::string lm_metrics_csv(const std::vector<LmPoint>& history);
std::string lm_compare_csv(const std::vector<std::string>& labels, const std::vector<std::vector<LmPoint>>& runs);
// "step   450/3594  epoch 0.25  train loss 2.4162  val loss 2.2631  31.2s"
std::string lm_point_line(const LmPoint& p, long long total_steps);
// For plot_curves and curve_difference: EpochMetrics whose `epoch` is the step, accuracies NaN.
Curve lm_curve(const std::string& label, const std::vector<LmPoint>& history);

// New lines from the model: each starts at the boundary and ends at the next
// one (or after max_chars characters); logits / temperature, drawn from rng
// (in log space: finite at any positive temperature). Throws DataError when the
// model's logits are not finite (weights that overflow).
std::vector<std::string> sample_lines(Gpt& model, const Vocabulary& vocab, std::size_t count, double temperature,
                                      Rng& rng, std::size_t max_chars);

}  // namespace ag
