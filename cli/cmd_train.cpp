// autograd train: trains an MLP (or, with --model gpt, a character-level GPT),
// prints a line per evaluation, writes OUT/metrics.csv, OUT/curves.png and OUT/model.ckpt.
// Wiring only: the options bind onto an ag::RunConfig (cli/run_options.h), the
// data loads once into the task (train/tasks.h), ag::train (train/trainer.h) trains it.
#include <iostream>

#include "autograd/format.h"
#include "cli/run_folder.h"
#include "cli/run_options.h"
#include "train/checkpoint.h"
#include "train/progress.h"
#include "train/tasks.h"
#include "train/trainer.h"

namespace cli {

int cmd_train(const std::vector<std::string>& args) {
  po::options_description options("options");
  RunOptions run;
  add_run_options(options, run, "runs/train");
  po::variables_map vm;
  if (!parse_run_options("train", "Trains a multilayer perceptron (or, with --model gpt, a character-level GPT);\n"
                         "writes OUT/metrics.csv, OUT/curves.png, OUT/model.ckpt.",
                         options, args, run, vm)) {
    return 0;
  }
  const ag::RunConfig& config = run.config;
  check_run_config(config);
  if (config.model == ag::ModelKind::Gpt && vm["out"].defaulted()) run.out = "runs/gpt";
  const std::unique_ptr<ag::TrainingTask> task = ag::make_task(config, ag::load_task_data(config));  // bad data fails before --out is touched
  RunFolder out(run.out, {"metrics.csv", "model.ckpt", "curves.png"});
  std::cout << task->data_summary() << std::flush;

  const ag::TimeAxis axis = ag::axis_of(config);
  ag::Progress progress(std::cout, ag::Progress::stdout_is_terminal(), axis, ag::last_x(config, task->train_size()));
  ag::TrainCallbacks callbacks = progress.callbacks();
  callbacks.on_checkpoint = [&](ag::TrainingTask& trained, const ag::Metrics&) {
    out.produce("model.ckpt", [&](const std::string& path) {
      ag::save_checkpoint(path, trained.parameters(), trained.checkpoint_description(), trained.statistics());
    });
  };
  const std::vector<ag::Metrics> history = ag::train(config, *task, callbacks);
  std::cout << task->result_summary(history);

  // Every file of the run is complete before any replaces the last run's.
  out.write("metrics.csv", ag::metrics_csv(history, axis));
  const ag::PlotResult plot = ag::plot_curves(out.staged("curves.png"), {{"", history}}, task->title(), task->plot_style());
  for (const std::string& path : out.commit()) std::cout << "wrote " << ag::printable(path) << "\n";
  if (!plot.written) std::cout << "no plot: " << plot.message << "\n";
  return 0;
}

}  // namespace cli
