// autograd train: trains an MLP (or, with --model gpt, a character-level GPT),
// prints a line per evaluation, writes OUT/metrics.csv, OUT/curves.png and OUT/model.ckpt.
// Wiring only: the options parse into an ag::RunConfig, the data loads once
// into the task, ag::train (train/trainer.h) trains it.
#include <cstdio>
#include <iostream>

#include "autograd/format.h"
#include "cli/run_folder.h"
#include "cli/train_options.h"
#include "cli/train_run.h"
#include "train/checkpoint.h"
#include "train/progress.h"
#include "train/trainer.h"

namespace cli {

namespace {

std::string title_for(const ag::RunConfig& c) {
  std::string hidden;
  for (arma::uword h : c.hidden) hidden += (hidden.empty() ? "" : ",") + std::to_string(h);
  return c.dataset + ": MLP hidden " + (hidden.empty() ? "none" : hidden) + ", norm " + ag::norm_name(c.norm) +
         (c.norm == ag::Norm::None ? "" : std::string(" (") + ag::impl_name(c.impl) + ")") + ", " +
         ag::optimizer_name(c.optimizer) + " lr " + ag::format_number(c.lr) + ", batch " + std::to_string(c.batch_size);
}

// Short enough for the plot's width: "words: GPT 4x64, 4 heads, pre-norm (bigram 2.472)".
std::string gpt_title(const ag::RunConfig& c, const ag::GptSpec& spec, double bigram) {
  char line[200];
  std::snprintf(line, sizeof line, "%s: GPT %zux%zu, %zu heads, %s-norm (bigram %.3f)", c.dataset.c_str(),
                static_cast<std::size_t>(spec.layers), static_cast<std::size_t>(spec.block.width),
                static_cast<std::size_t>(spec.block.heads), ag::placement_name(spec.block.placement), bigram);
  return line;
}

void print_text_data(const ag::RunConfig& config, const ag::LmData& data) {
  std::printf("data: %s, %zu lines (%zu train / %zu validation), %zu characters + the boundary token\n",
              ag::printable(config.dataset).c_str(), data.text.lines.size(), data.split.train.size(), data.split.validation.size(),
              data.text.vocab.chars.size());
  std::printf("bigram baseline: val loss %.4f (nats per character, add-one smoothing, %zu validation targets)\n",
              data.bigram_val_loss, ag::count_targets(data.validation));
  std::fflush(stdout);
}

void print_summary(const TrainRun& run, const std::vector<ag::Metrics>& history) {
  const ag::TrainingTask& task = run.task();
  if (run.table) {
    std::cout << "model: " << task.describe() << "  (" << run.table->model.parameter_count() << " parameters; "
              << run.table->split.train.size() << " train / " << run.table->split.validation.size()
              << " validation samples)\n";
    return;
  }
  const double bigram = run.text->data.bigram_val_loss;
  std::cout << "model: " << task.describe() << "  (" << run.text->model->parameter_count() << " parameters)\n";
  std::printf("val loss %.4f = %.3fx the bigram baseline %.4f\n", history.back().val_loss,
              history.back().val_loss / bigram, bigram);
}

std::string title(const TrainRun& run) {
  if (run.table) return title_for(run.config);
  return gpt_title(run.config, run.text->spec, run.text->data.bigram_val_loss);
}

}  // namespace

int cmd_train(const std::vector<std::string>& args) {
  po::options_description options("options");
  TrainOptions values;
  add_train_options(options, values, "runs/train");
  po::variables_map vm;
  if (!parse_options("train", "Trains a multilayer perceptron (or, with --model gpt, a character-level GPT);\n"
                     "writes OUT/metrics.csv, OUT/curves.png, OUT/model.ckpt.",
                     options, args, vm)) {
    return 0;
  }
  resolve_model_options(vm, values);
  if (is_gpt(values) && vm["out"].defaulted()) values.out = "runs/gpt";
  const ag::RunConfig config = make_run_config(values, values.norm, values.impl, values.norm_placement);
  TrainRun run = make_train_run(config, load_run_data(config));  // bad data fails before --out is touched
  RunFolder out(values.out, {"metrics.csv", "model.ckpt", "curves.png"});
  if (run.text) print_text_data(config, run.text->data);

  const ag::TimeAxis axis = ag::axis_of(config);
  ag::Progress progress(std::cout, ag::Progress::stdout_is_terminal(), axis, last_x(run));
  ag::TrainCallbacks callbacks = progress.callbacks();
  callbacks.on_checkpoint = [&](ag::TrainingTask& task, const ag::Metrics&) {
    out.produce("model.ckpt", [&](const std::string& path) {
      ag::save_checkpoint(path, task.parameters(), checkpoint_metadata(run));
    });
  };
  const std::vector<ag::Metrics> history = ag::train(config, run.task(), callbacks);
  print_summary(run, history);

  // Every file of the run is complete before any replaces the last run's.
  out.write("metrics.csv", ag::metrics_csv(history, axis));
  const ag::PlotResult plot = ag::plot_curves(out.staged("curves.png"), {{"", history}}, title(run), plot_style(run));
  for (const std::string& path : out.commit()) std::cout << "wrote " << ag::printable(path) << "\n";
  if (!plot.written) std::cout << "no plot: " << plot.message << "\n";
  return 0;
}

}  // namespace cli
