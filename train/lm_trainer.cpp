#include "train/lm_trainer.h"
#include "train/lm_memory.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>

#include "autograd/memory.h"
#include "autograd/error.h"
#include "data/datasets.h"
#include "nn/optim.h"
#include "ops/losses.h"
#include "ops/softmax.h"
#include "train/shards.h"

namespace ag {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::size_t kEvalSequences = 64;  // sequences per forward pass when evaluating
constexpr std::size_t kShardSequences = 8;  // sequences per shard of a training batch (train/shards.h)

void validate(const LmConfig& c) {
  if (c.epochs < 1) throw Error("train: epochs must be at least 1, got " + std::to_string(c.epochs));
  if (c.batch_size < 1) throw Error("train: the batch size must be at least 1");
  if (!(c.lr > 0) || !std::isfinite(c.lr)) throw Error("train: the learning rate must be a positive number");
  if (c.warmup < 0) throw Error("train: the warm-up must be 0 steps or more");
  if (!(c.validation_fraction > 0 && c.validation_fraction < 1)) {
    throw Error("train: a language model needs a validation fraction in (0, 1) to report its loss against the bigram");
  }
  if (c.optimizer != "adam" && c.optimizer != "adamw") {
    throw Error("train: the GPT trains with adam or adamw, not '" + c.optimizer + "'");
  }
}

using Batch = SequenceBatch;

struct StepContext {
  Gpt& model;
  Optimizer& optimizer;
  const LmConfig& config;
  ShardRunner& shards;
  long long step = 0, total = 0;
};

// One step on the batch of sequences `rows`, cut into shards (train/shards.h);
// returns the batch's mean loss per target. Shard k's loss is its mean, so its
// backward is seeded with its share of the batch's targets, n_k / n.
double train_step(StepContext& ctx, const std::vector<Sequence>& sequences, const arma::uvec& rows, int epoch,
                  std::size_t s, std::size_t steps, std::size_t& targets) {
  ctx.optimizer.set_lr(lm_learning_rate(ctx.config, ctx.step++, ctx.total));
  std::vector<Batch> shards;
  double n = 0;
  for (const arma::uvec& shard : cut_into_shards(rows, kShardSequences)) {
    shards.push_back(gather_sequences(sequences, shard));
    n += static_cast<double>(shards.back().target.n_elem);
  }
  std::vector<double> losses(shards.size());
  ctx.shards.run(shards.size(), [&](std::size_t k, Tape& tape) {
    const Batch& b = shards[k];
    Var loss = softmax_cross_entropy(ctx.model.logits(tape, b.input, b.lengths), b.target);
    losses[k] = loss.item();
    const double share = static_cast<double>(b.target.n_elem) / n;
    if (std::isfinite(losses[k])) tape.backward(loss, arma::mat(1, 1, arma::fill::value(share)));
  });
  double value = 0;
  for (std::size_t k = 0; k < shards.size(); ++k) value += losses[k] * static_cast<double>(shards[k].target.n_elem) / n;
  if (!std::isfinite(value)) {
    throw TrainingDiverged("the loss became " + std::string(std::isnan(value) ? "NaN" : "infinite") + " at epoch " +
                           std::to_string(epoch) + ", step " + std::to_string(s + 1) + " of " + std::to_string(steps) +
                           " (try a smaller learning rate)");
  }
  ctx.optimizer.zero_grad();
  ctx.shards.add_param_grads(shards.size());
  if (ctx.config.clip > 0) clip_grad_norm(ctx.model.parameters(), ctx.config.clip);
  ctx.optimizer.step();
  targets = static_cast<std::size_t>(n);
  return value;
}

std::unique_ptr<Optimizer> make_optimizer(const LmConfig& c, std::vector<Parameter*> params) {
  AdamOptions adam;
  adam.lr = c.lr;
  adam.beta2 = 0.99;  // makemore's and nanoGPT's small-model choice: adapts faster than 0.999
  adam.weight_decay = c.weight_decay;
  if (c.optimizer == "adamw") return std::make_unique<AdamW>(std::move(params), adam);
  return std::make_unique<Adam>(std::move(params), adam);
}

}  // namespace

double lm_learning_rate(const LmConfig& c, long long step, long long total) {
  if (!c.cosine) return c.lr;
  const long long warmup = std::min<long long>(c.warmup, total / 2);
  if (step < warmup) return c.lr * static_cast<double>(step + 1) / static_cast<double>(warmup);
  const double progress = total - warmup <= 1 ? 1.0 : static_cast<double>(step - warmup) / static_cast<double>(total - warmup - 1);
  const double min_lr = c.lr / 10;
  return min_lr + (c.lr - min_lr) * 0.5 * (1 + std::cos(M_PI * std::min(progress, 1.0)));
}

LmData prepare_lm_data(const LmConfig& config) {
  LmData d;
  d.text = load_text_dataset(config.dataset);
  if (d.text.lines.size() < 2) {
    throw DataError(config.dataset + ": needs at least 2 lines (one to train on, one to validate), has " +
                    std::to_string(d.text.lines.size()));
  }
  Rng split_rng(derive_seed(config.seed, 2));
  d.split = split_lines(d.text, config.validation_fraction, split_rng);
  d.train = make_sequences(d.split.train, config.context);
  d.validation = make_sequences(d.split.validation, config.context);
  d.bigram_val_loss = fit_bigram(d.train, d.text.vocab.size()).loss(d.validation);
  return d;
}

GptSpec gpt_spec(const LmConfig& c, arma::uword vocab) {
  GptSpec spec;
  spec.vocab = vocab;
  spec.context = c.context;
  spec.layers = c.layers;
  spec.block.width = c.width;
  spec.block.heads = c.heads;
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
    const Batch batch = gather_sequences(sequences, arma::regspace<arma::uvec>(first, last));
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
    const Batch batch = gather_sequences(sequences, arma::regspace<arma::uvec>(first, last));
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

LmRun train_lm(const LmConfig& config, LmData data, const LmCallbacks& callbacks) {
  validate(config);
  use_memory_policy();  // every step frees and reallocates its matrices: keep the pages (autograd/memory.h)
  LmRun run;
  run.data = std::move(data);
  run.spec = gpt_spec(config, run.data.text.vocab.size());
  check_gpt_memory(run.spec, lm_workload(config, run.data));  // before any block is allocated
  Rng init_rng(derive_seed(config.seed, 3));
  run.model = std::make_unique<Gpt>(run.spec, init_rng, derive_seed(config.seed, 5));
  std::unique_ptr<Optimizer> optimizer = make_optimizer(config, run.model->parameters());
  Rng batch_rng(derive_seed(config.seed, 4));
  // Dropout draws from the blocks' own streams as they run: one thread keeps their order.
  ShardRunner shards(config.dropout > 0 ? 1 : (config.threads > 0 ? config.threads : default_threads()));
  const std::size_t per_epoch = (run.data.train.size() + config.batch_size - 1) / config.batch_size;
  StepContext ctx{*run.model, *optimizer, config, shards, 0, static_cast<long long>(per_epoch) * config.epochs};
  const std::size_t evals = std::min<std::size_t>(std::max(config.evals_per_epoch, 1), per_epoch);
  const auto start = std::chrono::steady_clock::now();
  double loss_sum = 0, interval_sum = 0;
  std::size_t seen = 0, interval_seen = 0;
  for (int epoch = 1; epoch <= config.epochs; ++epoch) {
    const std::vector<arma::uvec> batches = shuffled_batches(run.data.train.size(), config.batch_size, batch_rng);
    loss_sum = 0;
    seen = 0;
    for (std::size_t s = 0, next_eval = 1; s < batches.size(); ++s) {
      std::size_t targets = 0;
      const double loss = train_step(ctx, run.data.train, batches[s], epoch, s, batches.size(), targets);
      const double n = static_cast<double>(targets);
      loss_sum += loss * n;  // for the progress bar: this epoch so far
      interval_sum += loss * n;  // for the curve: since the last evaluation
      seen += targets;
      interval_seen += targets;
      if (callbacks.on_step) {
        callbacks.on_step({epoch, config.epochs, s + 1, batches.size(), loss_sum / static_cast<double>(seen), kNaN});
      }
      if (s + 1 != (next_eval * batches.size()) / evals) continue;  // evaluate evals times, evenly spread
      ++next_eval;
      const double val = evaluate_lm(*run.model, run.data.validation, shards);
      const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
      run.history.push_back({ctx.step, (epoch - 1) + static_cast<double>(s + 1) / static_cast<double>(batches.size()),
                             interval_sum / static_cast<double>(interval_seen), val, elapsed.count()});
      interval_sum = 0;
      interval_seen = 0;
      if (callbacks.on_eval) callbacks.on_eval(run.history.back());
    }
  }
  return run;
}

namespace {
const auto number = csv_number;
std::string csv_row(const LmPoint& p) {
  return std::to_string(p.step) + "," + number(p.epoch) + "," + number(p.train_loss) + "," + number(p.val_loss) + "," +
         number(p.seconds) + "\n";
}
}  // namespace

std::string lm_metrics_csv(const std::vector<LmPoint>& history) {
  std::string text = "step,epoch,train_loss,val_loss,seconds\n";
  for (const LmPoint& p : history) text += csv_row(p);
  return text;
}

std::string lm_compare_csv(const std::vector<std::string>& labels, const std::vector<std::vector<LmPoint>>& runs) {
  std::string text = "run,step,epoch,train_loss,val_loss,seconds\n";
  for (std::size_t i = 0; i < runs.size() && i < labels.size(); ++i) {
    for (const LmPoint& p : runs[i]) text += labels[i] + "," + csv_row(p);
  }
  return text;
}

std::string lm_point_line(const LmPoint& p, long long total_steps) {
  char line[160];
  const int width = static_cast<int>(std::to_string(total_steps).size());
  std::snprintf(line, sizeof line, "step %*lld/%lld  epoch %.2f  train loss %.4f  val loss %.4f  %.1fs", width, p.step,
                total_steps, p.epoch, p.train_loss, p.val_loss, p.seconds);
  return line;
}

Curve lm_curve(const std::string& label, const std::vector<LmPoint>& history) {
  Curve c{label, {}};
  for (const LmPoint& p : history) {
    c.history.push_back({static_cast<int>(p.step), p.train_loss, p.val_loss, kNaN, kNaN, p.seconds});
  }
  return c;
}

namespace {
// A draw from softmax(logits / temperature): the inverse of the cumulative sum at one uniform number.
// In log space, shifted first: (logits - max) / temperature is at most 0 for any temperature,
// so a subnormal temperature gives -inf (probability 0) for all but the likeliest token,
// never inf - inf. The caller refuses logits that are not finite (weights that overflow).
arma::uword draw(const arma::rowvec& logits, double temperature, Rng& rng) {
  const arma::rowvec p = arma::exp((logits - logits.max()) / temperature);
  const double u = rng.uniform() * arma::accu(p);
  double cumulative = 0;
  for (arma::uword k = 0; k < p.n_elem; ++k) {
    cumulative += p(k);
    if (u < cumulative) return k;
  }
  return p.index_max();  // u rounded up to the total: the likeliest token
}
}  // namespace

std::vector<std::string> sample_lines(Gpt& model, const Vocabulary& vocab, std::size_t count, double temperature,
                                      Rng& rng, std::size_t max_chars) {
  if (!(temperature > 0) || !std::isfinite(temperature)) throw Error("sample: the temperature must be a positive number");
  const bool was_training = model.training();
  model.eval();
  const arma::uword context = model.spec().context;
  std::vector<std::string> lines;
  Tape tape;
  for (std::size_t i = 0; i < count; ++i) {
    std::vector<arma::uword> tokens{kBoundary};
    while (tokens.size() <= max_chars) {
      const std::size_t n = std::min<std::size_t>(tokens.size(), context);  // the last `context` tokens
      const arma::uvec window(std::vector<arma::uword>(tokens.end() - n, tokens.end()));
      tape.clear();
      NoGrad no_grad(tape);
      const arma::mat& logits = model.logits(tape, window, {n}).value();
      if (!logits.is_finite()) {
        throw DataError("the model's logits are not finite (NaN or inf): its weights overflow double precision");
      }
      const arma::uword next = draw(logits.row(logits.n_rows - 1), temperature, rng);
      if (next == kBoundary) break;
      tokens.push_back(next);
    }
    lines.push_back(vocab.decode(tokens));
  }
  model.train(was_training);
  return lines;
}

}  // namespace ag
