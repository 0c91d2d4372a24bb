#include "train/table_task.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "autograd/error.h"
#include "autograd/format.h"
#include "ops/losses.h"
#include "train/model_description.h"

namespace ag {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kMaxModelBytes = 4.0 * (1ULL << 30);  // 4 GiB: far above any model a lesson trains
}  // namespace

MlpSpec model_spec(const RunConfig& config, const Dataset& data) {
  MlpSpec spec;
  spec.sizes.push_back(data.features());
  for (arma::uword h : config.hidden) spec.sizes.push_back(h);
  spec.sizes.push_back(data.task == Task::Classification ? data.classes : 1);
  spec.norm = config.norm;
  spec.norm_after_activation = config.placement == Placement::Post;
  spec.impl = config.impl;
  spec.activation = config.activation;
  spec.init = config.activation == Activation::Tanh ? Init::Xavier : Init::Kaiming;
  spec.init_scale = config.init_scale;
  return spec;
}

// Refuses, before anything is allocated, a model whose memory would not fit:
// `--hidden 999999,999999` must be a message, not std::bad_alloc. The estimate
// is rough on purpose: each parameter's value, gradient and two Adam moments,
// and for the largest batch a handful of rows x width matrices per layer
// (values, gradients, the norms' intermediates).
void check_model_size(const RunConfig& config, const Dataset& data) {
  const MlpSpec spec = model_spec(config, data);
  // The most rows one forward pass sees: a batch, or the whole validation set.
  const double n = static_cast<double>(data.size());
  const double rows = std::max(std::min(static_cast<double>(config.batch_size), n), std::ceil(config.validation_fraction * n));
  double params = 0, widths = 0;
  std::string shape;
  for (std::size_t i = 0; i < spec.sizes.size(); ++i) {
    const double out = static_cast<double>(spec.sizes[i]);
    widths += out;
    shape += (i ? "-" : "") + std::to_string(spec.sizes[i]);
    if (i == 0) continue;
    params += static_cast<double>(spec.sizes[i - 1]) * out + out;  // weight and bias
    if (i + 1 < spec.sizes.size() && spec.norm != Norm::None) params += 2 * out;
  }
  const double bytes = 8.0 * (4.0 * params + 10.0 * rows * widths);
  if (bytes <= kMaxModelBytes) return;
  char line[200];
  std::snprintf(line, sizeof line, "needs about %.1f GiB of memory (%.4g parameters, %.0f rows at a time); the limit is %.0f GiB",
                bytes / (1ULL << 30), params, rows, kMaxModelBytes / (1ULL << 30));
  throw DataError("the model " + shape + " " + line + ": use smaller hidden layer sizes (--hidden)");
}

// In eval mode: a BatchNorm then normalises with its running statistics and
// leaves them as they were, so evaluating changes nothing that training reads.
Evaluation evaluate(Sequential& model, const Dataset& data, Tape& tape) {
  if (data.size() == 0) return {kNaN, kNaN};
  tape.clear();
  NoGrad no_grad(tape);
  const bool was_training = model.training();
  model.eval();
  Var out = model(tape.constant(data.x, "x"));
  model.train(was_training);
  if (data.task == Task::Regression) return {mse(out, data.y).value()(0), kNaN};
  const arma::uvec labels = data.labels();
  return {softmax_cross_entropy(out, labels).value()(0), accuracy(out.value(), labels)};
}

TableTask::TableTask(const RunConfig& config, const Dataset& data) : config(config) {
  Rng split_rng(derive_seed(config.seed, 2));
  split = train_validation_split(data, config.validation_fraction, split_rng);
  if (split.train.size() == 0) throw DataError(config.dataset + ": no samples left to train on");
  const std::size_t batch = static_cast<std::size_t>(config.batch_size);
  if (config.norm == Norm::BatchNorm && batch < split.train.size() && split.train.size() % batch == 1) {
    throw DataError("batchnorm needs 2 or more samples in every batch: " + std::to_string(split.train.size()) +
                    " training samples in batches of " + std::to_string(batch) + " leave 1 in the last; choose another batch size");
  }
  spec = model_spec(config, data);
  check_model_size(config, data);
  Rng init_rng(derive_seed(config.seed, 3));
  model = make_mlp(spec, init_rng);
}

// Cross-entropy for classes, mean squared error for values.
Var TableTask::loss(Tape& tape, const arma::uvec& rows, double& correct) {
  const Dataset& train = split.train;
  Var out = model(tape.constant(train.x.rows(rows), "x"));
  if (train.task == Task::Regression) return mse(out, arma::mat(train.y.rows(rows)));
  const arma::uvec labels = train.labels(rows);
  correct += accuracy(out.value(), labels) * static_cast<double>(rows.n_elem);
  return softmax_cross_entropy(out, labels);
}

Evaluation TableTask::evaluate(ShardRunner&) { return ag::evaluate(model, split.validation, eval_tape_); }

std::string TableTask::describe() const {
  std::string line = model.describe();
  for (char& c : line) c = c == '\n' ? ' ' : c;
  return line.substr(0, line.find_last_not_of(' ') + 1);
}

// The last line is what the training page shows for the same settings: the
// loss on the whole training set to 12 significant digits, so the two can be compared.
std::string TableTask::result_summary(const std::vector<Metrics>& history) {
  const Evaluation train = ag::evaluate(model, split.train, eval_tape_);
  char line[160];
  std::snprintf(line, sizeof line, "after step %lld: train loss %.12g (the whole training set), validation accuracy %.2f%%\n",
                history.empty() ? 0LL : history.back().step, train.loss, 100 * (history.empty() ? kNaN : history.back().val_accuracy));
  return "model: " + describe() + "  (" + std::to_string(model.parameter_count()) + " parameters; " +
         std::to_string(split.train.size()) + " train / " + std::to_string(split.validation.size()) + " validation samples)\n" +
         line;
}

std::string TableTask::title() const {
  std::string hidden;
  for (arma::uword h : config.hidden) hidden += (hidden.empty() ? "" : ",") + std::to_string(h);
  return config.dataset + ": MLP hidden " + (hidden.empty() ? "none" : hidden) + ", norm " + norm_name(config.norm) +
         (config.norm == Norm::None ? ""
                                    : std::string(" (") + impl_name(config.impl) +
                                          (config.placement == Placement::Post ? ", after the activation" : "") + ")") + ", " +
         optimizer_name(config.optimizer) + " lr " + format_number(config.lr) + ", batch " + std::to_string(config.batch_size);
}

std::string TableTask::checkpoint_description() const { return describe_model(config, spec); }

}  // namespace ag
