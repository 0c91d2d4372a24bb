#include "train/text_task.h"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "autograd/error.h"
#include "autograd/format.h"
#include "ops/losses.h"
#include "train/lm_memory.h"
#include "train/model_description.h"
#include "train/shards.h"

namespace ag {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::size_t kEvalSequences = 64;  // sequences per forward pass when evaluating
}  // namespace

LmData prepare_lm_data(const RunConfig& config) { return prepare_lm_data(config, load_text_dataset(config.dataset)); }

LmData prepare_lm_data(const RunConfig& config, TextData text) {
  LmData d;
  d.text = std::move(text);
  if (d.text.lines.size() < 2) {
    throw DataError(config.dataset + ": needs at least 2 lines (one to train on, one to validate), has " +
                    std::to_string(d.text.lines.size()));
  }
  Rng split_rng(derive_seed(config.seed, 2));
  d.split = split_lines(d.text, config.validation_fraction, split_rng);
  const arma::uword context = static_cast<arma::uword>(config.context);
  d.train = make_sequences(d.split.train, context);
  d.validation = make_sequences(d.split.validation, context);
  d.bigram_val_loss = fit_bigram(d.train, d.text.vocab.size()).loss(d.validation);
  return d;
}

TextData with_vocabulary(const TextData& text, const Vocabulary& vocab) {
  std::vector<Token> token_of(text.vocab.chars.size() + 1, 0);  // the text's token -> the model's
  for (std::size_t k = 0; k < text.vocab.chars.size(); ++k) {
    const std::string& c = text.vocab.chars[k];
    const auto at = std::lower_bound(vocab.chars.begin(), vocab.chars.end(), c);
    if (at == vocab.chars.end() || *at != c) {
      std::string known;
      for (const std::string& ch : vocab.chars) known += ch;
      throw DataError(text.name + ": the character '" + c + "' is not in the model's vocabulary (" +
                      std::to_string(vocab.chars.size()) + " characters: " + known + ")");
    }
    token_of[k + 1] = static_cast<Token>(at - vocab.chars.begin() + 1);
  }
  TextData out;
  out.name = text.name;
  out.vocab = vocab;
  out.lines = text.lines;
  for (TokenLine& line : out.lines) {
    for (Token& t : line) t = token_of[t];
  }
  return out;
}

GptSpec gpt_spec(const RunConfig& c, arma::uword vocab) {
  GptSpec spec;
  spec.vocab = vocab;
  spec.context = static_cast<arma::uword>(c.context);
  spec.layers = static_cast<arma::uword>(c.layers);
  spec.block.width = static_cast<arma::uword>(c.width);
  spec.block.heads = static_cast<arma::uword>(c.heads);
  spec.block.placement = c.placement;
  spec.block.norm = c.placement == Placement::None ? Norm::None : c.norm;
  spec.block.impl = c.impl;
  spec.block.dropout = c.dropout;
  return spec;
}

double evaluate_lm(Gpt& model, const std::vector<Sequence>& sequences, Tape& tape) {
  if (sequences.empty()) return kNaN;
  const bool was_training = model.training();
  model.eval();
  double total = 0;
  std::size_t n = 0;
  for (std::size_t first = 0; first < sequences.size(); first += kEvalSequences) {
    const std::size_t last = std::min(first + kEvalSequences, sequences.size()) - 1;
    const SequenceBatch batch = gather_sequences(sequences, arma::regspace<arma::uvec>(first, last));
    tape.clear();
    NoGrad no_grad(tape);
    const double loss = softmax_cross_entropy(model.logits(tape, batch.input, batch.lengths), batch.target).item();
    total += loss * static_cast<double>(batch.target.n_elem);
    n += batch.target.n_elem;
  }
  model.train(was_training);
  return total / static_cast<double>(n);
}

double evaluate_lm(Gpt& model, const std::vector<Sequence>& sequences, ShardRunner& shards) {
  if (sequences.empty()) return kNaN;
  const bool was_training = model.training();
  model.eval();
  const std::size_t count = (sequences.size() + kEvalSequences - 1) / kEvalSequences;
  std::vector<double> totals(count), targets(count);
  shards.run_each(count, [&](std::size_t k, Tape& tape) {
    const std::size_t first = k * kEvalSequences, last = std::min(first + kEvalSequences, sequences.size()) - 1;
    const SequenceBatch batch = gather_sequences(sequences, arma::regspace<arma::uvec>(first, last));
    {
      NoGrad no_grad(tape);
      const double loss = softmax_cross_entropy(model.logits(tape, batch.input, batch.lengths), batch.target).item();
      totals[k] = loss * static_cast<double>(batch.target.n_elem);
      targets[k] = static_cast<double>(batch.target.n_elem);
    }
    tape.clear();  // a chunk's values are not needed after it: free them now
  });
  model.train(was_training);
  double total = 0, n = 0;
  for (std::size_t k = 0; k < count; ++k) total += totals[k], n += targets[k];  // in chunk order, as evaluate_lm(tape)
  return total / n;
}

TextTask::TextTask(const RunConfig& config, LmData lm)
    : config(config), data(std::move(lm)), spec(gpt_spec(config, data.text.vocab.size())) {
  check_gpt_memory(spec, lm_workload(config, data));  // before any block is allocated
  Rng init_rng(derive_seed(config.seed, 3));
  model = std::make_unique<Gpt>(spec, init_rng, derive_seed(config.seed, 5));
}

double TextTask::weight(const arma::uvec& sequences) const {
  double targets = 0;
  for (arma::uword r : sequences) targets += static_cast<double>(data.train[r].size());
  return targets;
}

Var TextTask::loss(Tape& tape, const arma::uvec& sequences, double&) {
  const SequenceBatch b = gather_sequences(data.train, sequences);
  return softmax_cross_entropy(model->logits(tape, b.input, b.lengths), b.target);
}

Evaluation TextTask::evaluate(ShardRunner& shards) { return {evaluate_lm(*model, data.validation, shards), kNaN}; }

std::string TextTask::data_summary() const {
  char line[400];
  std::snprintf(line, sizeof line,
                "data: %s, %zu lines (%zu train / %zu validation), %zu characters + the boundary token\n"
                "bigram baseline: val loss %.4f (nats per character, add-one smoothing, %zu validation targets)\n",
                printable(config.dataset).c_str(), data.text.lines.size(), data.split.train.size(),
                data.split.validation.size(), data.text.vocab.chars.size(), data.bigram_val_loss,
                count_targets(data.validation));
  return line;
}

std::string TextTask::result_summary(const std::vector<Metrics>& history) {
  const double bigram = data.bigram_val_loss, last = history.back().val_loss;
  char line[200];
  std::snprintf(line, sizeof line, "val loss %.4f = %.3fx the bigram baseline %.4f\n", last, last / bigram, bigram);
  return "model: " + describe() + "  (" + std::to_string(model->parameter_count()) + " parameters)\n" + line;
}

// Short enough for the plot's width: "words: GPT 4x64, 4 heads, pre-norm (bigram 2.472)".
std::string TextTask::title() const {
  char line[200];
  std::snprintf(line, sizeof line, "%s: GPT %zux%zu, %zu heads, %s-norm (bigram %.3f)", config.dataset.c_str(),
                static_cast<std::size_t>(spec.layers), static_cast<std::size_t>(spec.block.width),
                static_cast<std::size_t>(spec.block.heads), placement_name(spec.block.placement), data.bigram_val_loss);
  return line;
}

PlotStyle TextTask::plot_style() const { return {TimeAxis::Step, false, data.bigram_val_loss, "bigram baseline"}; }

std::string TextTask::checkpoint_description() const { return describe_model(config, spec, data.text.vocab); }

}  // namespace ag
