// autograd compare: the same model from the same initial weights, trained
// once per value of one option (--impl composed,fused or --norm none,layernorm,...),
// all curves on one chart.
#include <cstdio>
#include <iostream>

#include "cli/run_folder.h"
#include "cli/train_options.h"
#include "train/plot.h"

namespace cli {

namespace {

// Validation loss and accuracy of every run, side by side, one row per epoch.
void print_table(const std::vector<ag::Curve>& curves) {
  std::printf("%-6s", "epoch");
  for (const ag::Curve& c : curves) std::printf("  %22s", (c.label + " val loss / acc").c_str());
  std::printf("\n");
  for (std::size_t e = 0; e < curves[0].history.size(); ++e) {
    std::printf("%-6d", curves[0].history[e].epoch);
    for (const ag::Curve& c : curves) {
      std::printf("  %13.6f / %5.2f%%", c.history[e].val_loss, 100 * c.history[e].val_accuracy);
    }
    std::printf("\n");
  }
}

// Composed vs fused: prints the largest differences; false when a loss curve differs by more than tolerance.
bool within_tolerance(const std::vector<ag::Curve>& curves, double tolerance) {
  bool within = true;
  for (std::size_t i = 1; i < curves.size(); ++i) {
    const ag::CurveDifference d = ag::curve_difference(curves[0].history, curves[i].history);
    std::printf("largest difference %s vs %s: train loss %.3g, val loss %.3g (largest at epoch %d), train acc %.3g, val acc %.3g\n",
                curves[0].label.c_str(), curves[i].label.c_str(), d.train_loss, d.val_loss, d.worst_loss_epoch,
                d.train_accuracy, d.val_accuracy);
    within = within && d.train_loss <= tolerance && d.val_loss <= tolerance;
  }
  if (!within) std::printf("FAIL: the loss curves differ by more than --tolerance %g\n", tolerance);
  return within;
}

}  // namespace

int cmd_compare(const std::vector<std::string>& args) {
  po::options_description options("options");
  TrainOptions values;
  values.impl = "composed,fused";
  values.norm = "layernorm";
  double tolerance = 1e-9;
  add_train_options(options, values, "runs/compare");
  options.add_options()("tolerance", po::value(&tolerance)->default_value(tolerance, "1e-9"),
                        "composed vs fused: the largest loss difference allowed (exit 1 above it)");
  po::variables_map vm;
  if (!parse_options("compare", "Trains the same model from the same initialisation once per value of --impl or\n"
                     "--norm (give a comma-separated list to one of them) and overlays the curves.",
                     options, args, vm)) {
    return 0;
  }
  if (!(require_finite("tolerance", tolerance) >= 0)) {
    throw UsageError("--tolerance must be 0 or more, got " + std::to_string(tolerance));
  }
  const std::vector<std::string> norms = split_list(values.norm);
  std::vector<std::string> impls = split_list(values.impl);
  // The default varies --impl; a --norm list on its own varies the norm instead.
  if (norms.size() > 1 && vm["impl"].defaulted()) impls = {"composed"};
  if ((norms.size() > 1) == (impls.size() > 1) || norms.empty() || impls.empty()) {
    throw UsageError("give a list of two or more values to exactly one of --norm and --impl (e.g. --impl composed,fused)");
  }
  const bool vary_impl = impls.size() > 1;
  std::vector<ag::TrainConfig> configs;
  for (const std::string& v : vary_impl ? impls : norms) {
    configs.push_back(make_config(values, vary_impl ? norms[0] : v, vary_impl ? v : impls[0]));
  }
  check_dataset(configs[0]);
  RunFolder out(values.out, {"metrics.csv", "curves.png"});

  std::vector<ag::Curve> curves;
  for (std::size_t i = 0; i < configs.size(); ++i) {
    const std::string label = vary_impl ? impls[i] : norms[i];
    const ag::TrainRun run = ag::train(configs[i]);
    std::cout << label << ": " << ag::epoch_line(run.history.back(), configs[i].epochs) << "\n";
    curves.push_back({label, run.history});
  }
  print_table(curves);
  out.write("metrics.csv", ag::compare_csv(curves));
  std::string varied;
  for (const ag::Curve& c : curves) varied += (varied.empty() ? "" : " vs ") + c.label;
  const std::string title = values.dataset + ": " + (vary_impl ? norms[0] + " " : "norm ") + varied +
                            " (same seed, same initial weights)";
  const ag::PlotResult plot = ag::plot_curves(out.staged("curves.png"), curves, title);
  for (const std::string& path : out.commit()) std::cout << "wrote " << path << "\n";
  if (!plot.written) std::cout << "no plot: " << plot.message << "\n";

  return vary_impl && !within_tolerance(curves, tolerance) ? 1 : 0;
}

}  // namespace cli
