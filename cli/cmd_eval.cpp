// autograd eval: loss and accuracy of a saved model on a dataset.
#include <cstdio>
#include <iostream>
#include <sstream>

#include "cli/train_options.h"
#include "autograd/error.h"
#include "train/checkpoint.h"

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
  std::cout << line << "\n";
}

std::string num(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// The data must have the model's inputs, and a task its output layer can score:
// a regression target needs one output, class labels one output per class.
void check_fits(const ag::Dataset& data, const ag::RunDescription& run, const std::string& model_path) {
  const arma::uword inputs = run.spec.sizes.front(), outputs = run.spec.sizes.back();
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
}  // namespace

int cmd_eval(const std::vector<std::string>& args) {
  po::options_description options("options");
  std::string model_path, dataset, label, split = "val";
  long long seed = -1;
  options.add_options()
      ("model", po::value(&model_path)->required(), "a checkpoint written by autograd train (DIR/model.ckpt)")
      ("dataset", po::value(&dataset), "dataset name or FILE.csv (default: the one the model was trained on)")
      ("label", po::value(&label), "CSV: the label column (default: as in training, else the last)")
      ("split", po::value(&split)->default_value(split), "val, train or all: which samples to score")
      ("seed", po::value(&seed), "seed for generated data and the split (default: the training seed)");
  po::variables_map vm;
  if (!parse_options("eval", "Reports the loss and accuracy of a saved model.", options, args, vm)) return 0;
  if (split != "val" && split != "train" && split != "all") {
    throw UsageError("--split '" + split + "' is not one of val, train, all");
  }
  if (vm.count("seed") && seed < 0) throw UsageError("--seed must be 0 or more, got " + std::to_string(seed));

  // The checkpoint says how to rebuild the model and the split it was trained with.
  const ag::Checkpoint ckpt = ag::read_checkpoint(model_path);
  ag::RunDescription run = ag::parse_run_description(ckpt.metadata, model_path);
  if (vm.count("dataset")) run.config.dataset = dataset;
  if (vm.count("label") || vm.count("dataset")) run.config.label_column = label;
  if (vm.count("seed")) run.config.seed = static_cast<std::uint64_t>(seed);
  const ag::Dataset data = ag::make_dataset(run.config.dataset, run.config.seed, run.config.label_column);
  check_fits(data, run, model_path);
  ag::check_description_against_records(run, ckpt, model_path);
  ag::Rng init_rng(0);
  ag::Sequential model = ag::make_mlp(run.spec, init_rng);
  ag::load_checkpoint(model_path, model.parameters());

  ag::Rng split_rng(ag::derive_seed(run.config.seed, 2));
  const ag::Split parts = ag::train_validation_split(data, run.config.validation_fraction, split_rng);
  const ag::Dataset& scored = split == "all" ? data : split == "train" ? parts.train : parts.validation;
  // An empty split would print "loss nan": say why there is nothing to score.
  if (scored.size() == 0 && run.config.validation_fraction == 0) {
    throw ag::DataError(model_path + ": the model was trained without a validation set (validation_fraction=0); " +
                        "use --split train or --split all");
  }
  if (scored.size() == 0) {
    throw ag::DataError(run.config.dataset + ": the " + split + " split is empty (" + std::to_string(data.size()) +
                        " samples, validation_fraction=" + num(run.config.validation_fraction) +
                        "); use --split all");
  }
  ag::Tape tape;
  const ag::Evaluation e = ag::evaluate(model, scored, tape);
  print_evaluation(run.config.dataset, split, scored, e);
  return 0;
}

}  // namespace cli
