// autograd train: trains an MLP (or, with --model gpt, a character-level GPT),
// prints a line per epoch, writes OUT/metrics.csv, OUT/curves.png and OUT/model.ckpt.
#include <cstdio>
#include <iostream>
#include <sstream>

#include "cli/run_folder.h"
#include "cli/train_options.h"
#include "train/checkpoint.h"
#include "train/lm_checkpoint.h"
#include "train/lm_memory.h"
#include "train/plot.h"
#include "train/progress.h"

namespace cli {

namespace {

std::string one_line(const std::string& text) {
  std::string line = text;
  for (char& c : line) c = c == '\n' ? ' ' : c;
  return line.substr(0, line.find_last_not_of(' ') + 1);
}

std::string number(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

std::string title_for(const ag::TrainConfig& c) {
  std::string hidden;
  for (arma::uword h : c.hidden) hidden += (hidden.empty() ? "" : ",") + std::to_string(h);
  return c.dataset + ": MLP hidden " + (hidden.empty() ? "none" : hidden) + ", norm " + ag::norm_name(c.norm) +
         (c.norm == ag::Norm::None ? "" : std::string(" (") + ag::impl_name(c.impl) + ")") + ", " + c.optimizer +
         " lr " + number(c.lr) + ", batch " + std::to_string(c.batch_size);
}

// Short enough for the plot's width: "words: GPT 4x64, 4 heads, pre-norm (bigram 2.472)".
std::string gpt_title(const ag::LmConfig& c, const ag::GptSpec& spec, double bigram) {
  char line[200];
  std::snprintf(line, sizeof line, "%s: GPT %zux%zu, %zu heads, %s-norm (bigram %.3f)", c.dataset.c_str(),
                static_cast<std::size_t>(spec.layers), static_cast<std::size_t>(spec.block.width),
                static_cast<std::size_t>(spec.block.heads), ag::placement_name(spec.block.placement), bigram);
  return line;
}

// The GPT: the data (and its bigram baseline) first, so a bad file fails before --out is touched.
int train_gpt(const TrainOptions& values) {
  const ag::LmConfig config = make_lm_config(values, values.norm_placement, values.norm, values.impl);
  ag::LmData data = ag::prepare_lm_data(config);
  ag::check_gpt_memory(ag::gpt_spec(config, data.text.vocab.size()), ag::lm_workload(config, data));
  RunFolder out(values.out, {"metrics.csv", "model.ckpt", "curves.png"});  // before any output: misuse prints nothing
  std::printf("data: %s, %zu lines (%zu train / %zu validation), %zu characters + the boundary token\n",
              config.dataset.c_str(), data.text.lines.size(), data.split.train.size(), data.split.validation.size(),
              data.text.vocab.chars.size());
  std::printf("bigram baseline: val loss %.4f (nats per character, add-one smoothing, %zu validation targets)\n",
              data.bigram_val_loss, ag::count_targets(data.validation));
  std::fflush(stdout);
  const bool terminal = ag::Progress::stdout_is_terminal();
  ag::Progress progress(std::cout, terminal, config.epochs);
  const double bigram = data.bigram_val_loss;
  const long long steps = static_cast<long long>((data.train.size() + config.batch_size - 1) / config.batch_size) * config.epochs;
  ag::LmCallbacks callbacks;
  callbacks.on_step = [&progress](const ag::StepInfo& s) { progress.step(s); };
  callbacks.on_eval = [&](const ag::LmPoint& p) {
    std::cout << (terminal ? "\r\x1b[K" : "") << ag::lm_point_line(p, steps) << std::endl;  // replaces the bar
  };
  ag::LmRun run = ag::train_lm(config, std::move(data), callbacks);
  std::cout << "model: " << run.model->describe() << "  (" << run.model->parameter_count() << " parameters)\n";
  std::printf("val loss %.4f = %.3fx the bigram baseline %.4f\n", run.history.back().val_loss,
              run.history.back().val_loss / bigram, bigram);
  out.write("metrics.csv", ag::lm_metrics_csv(run.history));
  out.produce("model.ckpt", [&](const std::string& path) {
    ag::save_checkpoint(path, run.model->parameters(), ag::describe_lm_run(config, run.spec, run.data.text.vocab));
  });
  const ag::PlotStyle style{"step", false, bigram, "bigram baseline"};
  const ag::PlotResult plot = ag::plot_curves(out.staged("curves.png"), {ag::lm_curve("", run.history)},
                                              gpt_title(config, run.spec, bigram), style);
  for (const std::string& path : out.commit()) std::cout << "wrote " << path << "\n";
  if (!plot.written) std::cout << "no plot: " << plot.message << "\n";
  return 0;
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
  if (is_gpt(values)) {
    if (vm["out"].defaulted()) values.out = "runs/gpt";
    return train_gpt(values);
  }
  const ag::TrainConfig config = make_config(values, values.norm, values.impl);
  check_dataset(config);
  RunFolder out(values.out, {"metrics.csv", "model.ckpt", "curves.png"});

  ag::Progress progress(std::cout, ag::Progress::stdout_is_terminal(), config.epochs);
  ag::TrainRun run = ag::train(config, progress.callbacks());
  std::cout << "model: " << one_line(run.model.describe()) << "  (" << run.model.parameter_count()
            << " parameters; " << run.split.train.size() << " train / " << run.split.validation.size()
            << " validation samples)\n";

  // Every file of the run is complete before any replaces the last run's.
  out.write("metrics.csv", ag::metrics_csv(run.history));
  out.produce("model.ckpt", [&](const std::string& path) {
    ag::save_checkpoint(path, run.model.parameters(), ag::describe_run(config, run.spec));
  });
  const ag::PlotResult plot = ag::plot_curves(out.staged("curves.png"), {{"", run.history}}, title_for(config));
  for (const std::string& path : out.commit()) std::cout << "wrote " << path << "\n";
  if (!plot.written) std::cout << "no plot: " << plot.message << "\n";
  return 0;
}

}  // namespace cli
