// The task for text (train/task.h, TrainingTask): a character-level GPT on
// lines of text (data/text.h), makemore-style: every line framed by the
// boundary token, a seeded split by line, and the validation loss in nats per
// character, next to the bigram baseline scored on exactly the same targets.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "data/text.h"
#include "nn/gpt.h"
#include "train/config.h"
#include "train/task.h"

namespace ag {

class ShardRunner;

struct LmData {
  TextData text;
  TextSplit split;
  std::vector<Sequence> train, validation;
  double bigram_val_loss = 0;  // nats per character on `validation`'s targets
};
// Loads config.dataset, splits it (Rng stream 2 of the seed), cuts it into sequences and fits the bigram.
LmData prepare_lm_data(const RunConfig& config);
// The same for text already loaded (`autograd eval`: encoded with the model's vocabulary).
LmData prepare_lm_data(const RunConfig& config, TextData text);

// `text` in the tokens of `vocab` (a trained model's): throws DataError naming the
// first character of `text` that `vocab` does not hold.
TextData with_vocabulary(const TextData& text, const Vocabulary& vocab);

GptSpec gpt_spec(const RunConfig& config, arma::uword vocab);

// Mean cross-entropy per target of `sequences` (nats per character), without gradients.
double evaluate_lm(Gpt& model, const std::vector<Sequence>& sequences, Tape& tape);
// The same, its chunks of sequences on the runner's threads, added in chunk order: the same bits.
double evaluate_lm(Gpt& model, const std::vector<Sequence>& sequences, ShardRunner& shards);

class TextTask : public TrainingTask {
 public:
  // Checks the model's memory (train/lm_memory.h) and builds it: weights from Rng
  // stream 3 of config.seed, dropout from stream 5.
  TextTask(const RunConfig& config, LmData data);

  std::size_t train_size() const override { return data.train.size(); }
  std::size_t shard_size() const override { return 8; }  // sequences
  double weight(const arma::uvec& sequences) const override;  // their targets
  Var loss(Tape& tape, const arma::uvec& sequences, double& correct) override;
  bool classifies() const override { return false; }
  Evaluation evaluate(ShardRunner& shards) override;
  std::vector<Parameter*> parameters() override { return model->parameters(); }
  std::string describe() const override { return model->describe(); }
  std::string data_summary() const override;  // the data and the bigram baseline
  std::string result_summary(const std::vector<Metrics>& history) override;
  std::string title() const override;
  PlotStyle plot_style() const override;  // steps, a linear loss axis, the bigram line
  std::string checkpoint_description() const override;

  RunConfig config;
  LmData data;
  GptSpec spec;
  std::unique_ptr<Gpt> model;
};

}  // namespace ag
