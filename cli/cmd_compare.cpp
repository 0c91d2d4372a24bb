// autograd compare: the same model from the same initial weights, trained
// once per value of one option (--impl composed,fused or --norm none,layernorm,...;
// for --model gpt also --norm-placement pre,post,none), all curves on one chart.
// Wiring only: the data loads once, each run is ag::train on its own task.
#include <cmath>
#include <cstdio>
#include <iostream>

#include "autograd/format.h"
#include "cli/run_folder.h"
#include "cli/run_options.h"
#include "train/plot.h"
#include "train/tasks.h"
#include "train/trainer.h"

namespace cli {

namespace {

// Validation loss and accuracy of every run, side by side, one row per evaluation.
// (A language model has no accuracy column: its loss alone.)
void print_table(const std::vector<ag::Curve>& curves, ag::TimeAxis axis) {
  const bool accuracy = !std::isnan(curves[0].history[0].val_accuracy);
  std::printf("%-6s", ag::axis_name(axis));
  for (const ag::Curve& c : curves) std::printf(accuracy ? "  %22s" : "  %14s", (c.label + (accuracy ? " val loss / acc" : " val loss")).c_str());
  std::printf("\n");
  for (std::size_t e = 0; e < curves[0].history.size(); ++e) {
    std::printf("%-6lld", static_cast<long long>(ag::x_of(curves[0].history[e], axis)));
    for (const ag::Curve& c : curves) {
      if (accuracy) std::printf("  %13.6f / %5.2f%%", c.history[e].val_loss, 100 * c.history[e].val_accuracy);
      else std::printf("  %14.6f", c.history[e].val_loss);
    }
    std::printf("\n");
  }
}

// One of --norm-placement (gpt), --norm, --impl is a list; every run trains on
// the same data from the same initial weights.
struct Varied {
  std::string option;              // "impl", "norm" or "norm-placement"
  std::vector<std::string> values;
};

Varied varied_option(const po::variables_map& vm, const RunOptions& run) {
  const std::vector<std::string> places = split_list(run.placements), norms = split_list(run.norms);
  std::vector<std::string> impls = split_list(run.impls);
  // The default varies --impl; a list of another option on its own varies that instead.
  if ((places.size() > 1 || norms.size() > 1) && vm["impl"].defaulted()) impls = {ag::impl_name(ag::Impl::Composed)};
  const int lists = (places.size() > 1) + (norms.size() > 1) + (impls.size() > 1);
  if (lists != 1 || places.empty() || norms.empty() || impls.empty()) {
    throw UsageError(run.config.model == ag::ModelKind::Gpt
                         ? "give a list of two or more values to exactly one of --norm-placement, --norm and --impl "
                           "(e.g. --norm-placement pre,post,none)"
                         : "give a list of two or more values to exactly one of --norm and --impl (e.g. --impl composed,fused)");
  }
  if (places.size() > 1) return {"norm-placement", places};
  if (norms.size() > 1) return {"norm", norms};
  return {"impl", impls};
}

// The run's config with the varied option at `value` and the others at their one value.
ag::RunConfig config_for(const RunOptions& run, const Varied& varied, const std::string& value) {
  ag::RunConfig c = run.config;
  auto pick = [&](const char* option, const std::string& list) { return varied.option == option ? value : split_list(list)[0]; };
  c.norm = parse_kind(ag::parse_norm, pick("norm", run.norms));
  c.impl = parse_kind(ag::parse_impl, pick("impl", run.impls));
  if (c.model == ag::ModelKind::Gpt) c.placement = parse_kind(ag::parse_placement, pick("norm-placement", run.placements));
  check_run_config(c);
  return c;
}

// Composed vs fused: prints the largest differences; false when a loss curve differs by more than tolerance.
bool within_tolerance(const std::vector<ag::Curve>& curves, double tolerance, ag::TimeAxis axis) {
  bool within = true;
  for (std::size_t i = 1; i < curves.size(); ++i) {
    const ag::CurveDifference d = ag::curve_difference(curves[0].history, curves[i].history, axis);
    std::printf("largest difference %s vs %s: train loss %.3g, val loss %.3g (largest at %s %lld), train acc %.3g, val acc %.3g\n",
                curves[0].label.c_str(), curves[i].label.c_str(), d.train_loss, d.val_loss, ag::axis_name(axis),
                static_cast<long long>(d.worst_loss_at), d.train_accuracy, d.val_accuracy);
    within = within && d.train_loss <= tolerance && d.val_loss <= tolerance;
  }
  if (!within) std::printf("FAIL: the loss curves differ by more than --tolerance %g\n", tolerance);
  return within;
}

std::string title_for(const ag::RunConfig& config, const Varied& varied) {
  std::string names;
  for (const std::string& v : varied.values) names += (names.empty() ? "" : " vs ") + v;
  if (config.model == ag::ModelKind::Gpt) return config.dataset + ": GPT " + varied.option + " " + names;  // short: the plot is 700 px wide
  return config.dataset + ": " + (varied.option == "impl" ? std::string(ag::norm_name(config.norm)) + " " : "norm ") + names +
         " (same seed, same initial weights)";
}

// A config and a task per value, each task on its own copy of the data loaded once.
struct Run {
  ag::RunConfig config;
  std::unique_ptr<ag::TrainingTask> task;
};

std::vector<Run> make_runs(const RunOptions& options, const Varied& varied) {
  std::vector<ag::RunConfig> configs;
  for (const std::string& v : varied.values) configs.push_back(config_for(options, varied, v));
  const ag::TaskData data = ag::load_task_data(configs[0]);
  std::vector<Run> runs;
  for (const ag::RunConfig& c : configs) runs.push_back({c, ag::make_task(c, data)});
  return runs;
}

}  // namespace

int cmd_compare(const std::vector<std::string>& args) {
  po::options_description options("options");
  RunOptions options_given;
  double tolerance = 1e-9;
  add_run_options(options, options_given, "runs/compare", true);
  options.add_options()("tolerance", po::value(&tolerance)->default_value(tolerance, "1e-9"),
                        "composed vs fused: the largest loss difference allowed (exit 1 above it)");
  po::variables_map vm;
  if (!parse_run_options("compare", "Trains the same model from the same initialisation once per value of --impl or\n"
                         "--norm (--model gpt: or --norm-placement; give a comma-separated list to one of them)\n"
                         "and overlays the curves.",
                         options, args, options_given, vm)) {
    return 0;
  }
  if (!(require_finite("tolerance", tolerance) >= 0)) {
    throw UsageError("--tolerance must be 0 or more, got " + std::to_string(tolerance));
  }
  const Varied varied = varied_option(vm, options_given);
  std::vector<Run> runs = make_runs(options_given, varied);
  RunFolder out(options_given.out, {"metrics.csv", "curves.png"});
  std::cout << runs[0].task->data_summary();
  const ag::TimeAxis axis = ag::axis_of(runs[0].config);
  std::vector<ag::Curve> curves;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const std::vector<ag::Metrics> history = ag::train(runs[i].config, *runs[i].task);
    const long long last = axis == ag::TimeAxis::Step ? history.back().step : runs[i].config.epochs;
    std::cout << varied.values[i] << ": " << ag::metrics_line(history.back(), axis, last) << std::endl;
    curves.push_back({varied.values[i], history});
  }
  print_table(curves, axis);
  out.write("metrics.csv", ag::compare_csv(curves, axis));
  const ag::PlotResult plot = ag::plot_curves(out.staged("curves.png"), curves, title_for(runs[0].config, varied),
                                              runs[0].task->plot_style());
  for (const std::string& path : out.commit()) std::cout << "wrote " << ag::printable(path) << "\n";
  if (!plot.written) std::cout << "no plot: " << plot.message << "\n";
  return varied.option == "impl" && !within_tolerance(curves, tolerance, axis) ? 1 : 0;
}

}  // namespace cli
