// autograd eval: loss and accuracy of a saved MLP on a dataset, or the loss per
// character of a saved GPT on a text file, against the bigram baseline.
// Wiring only: the checkpoint's description (train/model_description.h) says
// how to rebuild the model and the split it was trained with.
#include <cmath>
#include <cstdio>
#include <iostream>

#include "autograd/format.h"
#include "cli/cli.h"
#include "autograd/error.h"
#include "train/checkpoint.h"
#include "train/lm_memory.h"
#include "train/model_description.h"
#include "train/table_task.h"
#include "train/text_task.h"

namespace cli {

namespace {
void print_evaluation(const std::string& dataset, const std::string& split, const ag::Dataset& scored,
                      const ag::Evaluation& e) {
  char line[200];
  if (scored.task == ag::Task::Classification) {
    std::snprintf(line, sizeof line, "%s, %s (%llu samples): loss %.4f  accuracy %.2f%%", dataset.c_str(),
                  split.c_str(), static_cast<unsigned long long>(scored.size()), e.loss, 100 * e.accuracy);
  } else {
    std::snprintf(line, sizeof line, "%s, %s (%llu samples): loss (mse) %.4f", dataset.c_str(), split.c_str(),
                  static_cast<unsigned long long>(scored.size()), e.loss);
  }
  std::cout << ag::printable(line) << "\n";  // the dataset's name comes from the checkpoint
}

// The data must have the model's inputs, and a task its output layer can score:
// a regression target needs one output, class labels one output per class.
void check_fits(const ag::Dataset& data, const ag::ModelDescription& run, const std::string& model_path) {
  const arma::uword inputs = run.mlp.sizes.front(), outputs = run.mlp.sizes.back();
  const std::string model = "the model in " + model_path;
  if (data.features() != inputs) {
    throw ag::DataError(run.config.dataset + ": has " + std::to_string(data.features()) + " features; " + model +
                        " takes " + std::to_string(inputs));
  }
  if (data.task == ag::Task::Regression && outputs != 1) {
    throw ag::DataError(run.config.dataset + ": holds regression targets (labels that are not class numbers); " +
                        model + " is a classifier with " + std::to_string(outputs) + " outputs");
  }
  if (data.task == ag::Task::Classification && data.classes > outputs) {
    throw ag::DataError(run.config.dataset + ": has " + std::to_string(data.classes) + " classes; " + model +
                        " gives " + std::to_string(outputs) + " outputs");
  }
}

// Finite weights can still overflow in the forward (sample refuses such a
// model too): a loss that is NaN or inf is no score, and says so.
void require_finite_loss(double loss, const std::string& model_path) {
  if (!std::isfinite(loss)) {
    throw ag::DataError(model_path + ": the model's loss is " + ag::format_number(loss) +
                        ": its outputs are not finite (NaN or inf), its weights overflow double precision");
  }
}

struct EvalOptions {
  std::string model_path, split = "val";
};

int eval_mlp(const ag::ModelDescription& run, const ag::Checkpoint& ckpt, const EvalOptions& o) {
  if (ag::is_text_dataset(run.config.dataset)) {
    throw UsageError("--dataset " + run.config.dataset + " is text: the model in " + o.model_path +
                     " is an MLP, scored on a table (a GPT checkpoint reads text)");
  }
  const ag::Dataset data = ag::make_dataset(run.config.dataset, run.config.seed, run.config.label_column, run.config.generated);
  check_fits(data, run, o.model_path);
  ag::Rng init_rng(0);  // the weights come from the file
  ag::Sequential model = ag::make_mlp(run.mlp, init_rng);
  ag::apply_checkpoint(ckpt, model.parameters(), o.model_path, model.statistics());  // BatchNorm's running statistics too

  ag::Rng split_rng(ag::derive_seed(run.config.seed, 2));
  const ag::Split parts = ag::train_validation_split(data, run.config.validation_fraction, split_rng);
  const ag::Dataset& scored = o.split == "all" ? data : o.split == "train" ? parts.train : parts.validation;
  // An empty split would print "loss nan": say why there is nothing to score.
  if (scored.size() == 0 && run.config.validation_fraction == 0) {
    throw ag::DataError(o.model_path + ": the model was trained without a validation set (validation_fraction=0); " +
                        "use --split train or --split all");
  }
  if (scored.size() == 0) {
    throw ag::DataError(run.config.dataset + ": the " + o.split + " split is empty (" + std::to_string(data.size()) +
                        " samples, validation_fraction=" + ag::format_number(run.config.validation_fraction) + "); use --split all");
  }
  ag::Tape tape;
  const ag::Evaluation e = ag::evaluate(model, scored, tape);
  require_finite_loss(e.loss, o.model_path);
  print_evaluation(run.config.dataset, o.split, scored, e);
  return 0;
}

// The text in the model's own tokens, split as in training; the bigram is fitted on
// the training lines and scored on the same targets as the model.
int eval_gpt(const ag::ModelDescription& run, const ag::Checkpoint& ckpt, const EvalOptions& o) {
  if (!ag::is_text_dataset(run.config.dataset)) {
    throw UsageError("--dataset " + run.config.dataset + " is not text: the model in " + o.model_path +
                     " is a GPT, scored on words or a FILE.txt");
  }
  const ag::LmData data =
      ag::prepare_lm_data(run.config, ag::with_vocabulary(ag::load_text_dataset(run.config.dataset), run.vocab));
  ag::check_gpt_memory(run.gpt, ag::lm_workload(run.config, data));
  ag::Rng init_rng(0);  // the weights come from the file
  ag::Gpt model(run.gpt, init_rng);
  ag::apply_checkpoint(ckpt, model.parameters(), o.model_path);
  std::vector<ag::Sequence> scored = o.split == "train" ? data.train : data.validation;
  if (o.split == "all") scored.insert(scored.begin(), data.train.begin(), data.train.end());
  ag::Tape tape;
  const double loss = ag::evaluate_lm(model, scored, tape);
  require_finite_loss(loss, o.model_path);
  const double bigram = ag::fit_bigram(data.train, run.vocab.size()).loss(scored);
  const std::size_t lines = o.split == "all" ? data.text.lines.size()
                                             : (o.split == "train" ? data.split.train : data.split.validation).size();
  std::printf("%s, %s (%zu line%s, %zu characters to predict): loss %.4f nats per character, "
              "%.3fx the bigram baseline %.4f\n",
              ag::printable(run.config.dataset).c_str(), o.split.c_str(), lines, lines == 1 ? "" : "s", ag::count_targets(scored), loss,
              loss / bigram, bigram);
  return 0;
}

}  // namespace

int cmd_eval(const std::vector<std::string>& args) {
  po::options_description options("options");
  EvalOptions o;
  std::string dataset, label;
  long long seed = -1;
  options.add_options()
      ("model", po::value(&o.model_path)->required(), "a checkpoint written by autograd train (DIR/model.ckpt): an MLP or a GPT")
      ("dataset", po::value(&dataset), "mlp: dataset name or FILE.csv; gpt: words or FILE.txt (default: the one the model was trained on)")
      ("label", po::value(&label), "mlp, CSV: the label column (default: as in training, else the last)")
      ("split", po::value(&o.split)->default_value(o.split), "val, train or all: which samples (gpt: lines) to score")
      ("seed", po::value(&seed), "seed for generated data and the split (default: the training seed)");
  po::variables_map vm;
  if (!parse_options("eval", "Reports the loss and accuracy of a saved MLP, or the loss per character of a\n"
                     "saved GPT against the bigram baseline.", options, args, vm)) {
    return 0;
  }
  if (o.split != "val" && o.split != "train" && o.split != "all") {
    throw UsageError("--split '" + o.split + "' is not one of val, train, all");
  }
  if (vm.count("seed") && seed < 0) throw UsageError("--seed must be 0 or more, got " + std::to_string(seed));

  const ag::Checkpoint ckpt = ag::read_checkpoint(o.model_path);
  ag::ModelDescription run = ag::read_description(ckpt, o.model_path);  // every size against the records
  if (run.kind == ag::ModelKind::Gpt && vm.count("label")) throw UsageError("--label does not apply to a GPT checkpoint");
  if (vm.count("dataset")) run.config.dataset = dataset;
  if (vm.count("label") || vm.count("dataset")) run.config.label_column = label;
  if (vm.count("seed")) run.config.seed = static_cast<std::uint64_t>(seed);
  return run.kind == ag::ModelKind::Gpt ? eval_gpt(run, ckpt, o) : eval_mlp(run, ckpt, o);
}

}  // namespace cli
