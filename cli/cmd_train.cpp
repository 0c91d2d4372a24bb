// autograd train: trains an MLP, prints a line per epoch, writes
// OUT/metrics.csv, OUT/curves.png and OUT/model.ckpt.
#include <iostream>
#include <sstream>

#include "cli/run_folder.h"
#include "cli/train_options.h"
#include "train/checkpoint.h"
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

}  // namespace

int cmd_train(const std::vector<std::string>& args) {
  po::options_description options("options");
  TrainOptions values;
  add_train_options(options, values, "runs/train");
  po::variables_map vm;
  if (!parse_options("train", "Trains a multilayer perceptron; writes OUT/metrics.csv, OUT/curves.png, OUT/model.ckpt.",
                     options, args, vm)) {
    return 0;
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
