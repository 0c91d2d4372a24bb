// autograd compare: the same model from the same initial weights, trained
// once per value of one option (--impl composed,fused or --norm none,layernorm,...;
// for --model gpt also --norm-placement pre,post,none), all curves on one chart.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/run_folder.h"
#include "cli/train_options.h"
#include "train/plot.h"

namespace cli {

namespace {

// Validation loss and accuracy of every run, side by side, one row per epoch.
// (A language model has no accuracy column: its loss alone.)
void print_table(const std::vector<ag::Curve>& curves, const std::string& x_label) {
  const bool accuracy = !std::isnan(curves[0].history[0].val_accuracy);
  std::printf("%-6s", x_label.c_str());
  for (const ag::Curve& c : curves) std::printf(accuracy ? "  %22s" : "  %14s", (c.label + (accuracy ? " val loss / acc" : " val loss")).c_str());
  std::printf("\n");
  for (std::size_t e = 0; e < curves[0].history.size(); ++e) {
    std::printf("%-6d", curves[0].history[e].epoch);
    for (const ag::Curve& c : curves) {
      if (accuracy) std::printf("  %13.6f / %5.2f%%", c.history[e].val_loss, 100 * c.history[e].val_accuracy);
      else std::printf("  %14.6f", c.history[e].val_loss);
    }
    std::printf("\n");
  }
}

// --model gpt: one of --norm-placement, --norm, --impl is a list; every run
// trains on the same data from the same initial weights.
struct Varied {
  std::string option;              // "impl", "norm" or "norm-placement"
  std::vector<std::string> values;
};

Varied varied_gpt_option(const po::variables_map& vm, TrainOptions& values) {
  const std::vector<std::string> places = split_list(values.norm_placement), norms = split_list(values.norm);
  std::vector<std::string> impls = split_list(values.impl);
  if ((places.size() > 1 || norms.size() > 1) && vm["impl"].defaulted()) impls = {ag::impl_name(ag::LmConfig().impl)};
  const int lists = (places.size() > 1) + (norms.size() > 1) + (impls.size() > 1);
  if (lists != 1 || places.empty() || norms.empty() || impls.empty()) {
    throw UsageError("give a list of two or more values to exactly one of --norm-placement, --norm and --impl "
                     "(e.g. --norm-placement pre,post,none)");
  }
  values.norm_placement = places[0];
  values.norm = norms[0];
  values.impl = impls[0];
  if (places.size() > 1) return {"norm-placement", places};
  if (norms.size() > 1) return {"norm", norms};
  return {"impl", impls};
}

// Composed vs fused: prints the largest differences; false when a loss curve differs by more than tolerance.
bool within_tolerance(const std::vector<ag::Curve>& curves, double tolerance, const std::string& x_label) {
  bool within = true;
  for (std::size_t i = 1; i < curves.size(); ++i) {
    const ag::CurveDifference d = ag::curve_difference(curves[0].history, curves[i].history);
    std::printf("largest difference %s vs %s: train loss %.3g, val loss %.3g (largest at %s %d), train acc %.3g, val acc %.3g\n",
                curves[0].label.c_str(), curves[i].label.c_str(), d.train_loss, d.val_loss, x_label.c_str(), d.worst_loss_epoch,
                d.train_accuracy, d.val_accuracy);
    within = within && d.train_loss <= tolerance && d.val_loss <= tolerance;
  }
  if (!within) std::printf("FAIL: the loss curves differ by more than --tolerance %g\n", tolerance);
  return within;
}

// The table, the CSV (written already for a GPT), the plot; with a tolerance
// (composed vs fused) the check. Returns the exit status.
int finish(const std::vector<ag::Curve>& curves, RunFolder& out, const std::string& title, bool check, double tolerance,
           const ag::PlotStyle& style = {}) {
  const std::string& x_label = style.x_label;
  print_table(curves, x_label);
  if (x_label == "epoch") out.write("metrics.csv", ag::compare_csv(curves));
  const ag::PlotResult plot = ag::plot_curves(out.staged("curves.png"), curves, title, style);
  for (const std::string& path : out.commit()) std::cout << "wrote " << path << "\n";
  if (!plot.written) std::cout << "no plot: " << plot.message << "\n";
  return check && !within_tolerance(curves, tolerance, x_label) ? 1 : 0;
}

int compare_gpt(const po::variables_map& vm, TrainOptions& values, double tolerance) {
  const Varied varied = varied_gpt_option(vm, values);
  std::vector<ag::LmConfig> configs;
  for (const std::string& v : varied.values) {
    configs.push_back(make_lm_config(values, varied.option == "norm-placement" ? v : values.norm_placement,
                                     varied.option == "norm" ? v : values.norm, varied.option == "impl" ? v : values.impl));
  }
  const ag::LmData data = ag::prepare_lm_data(configs[0]);  // the same split for every run
  RunFolder out(values.out, {"metrics.csv", "curves.png"});
  std::printf("bigram baseline: val loss %.4f\n", data.bigram_val_loss);
  std::vector<ag::Curve> curves;
  std::vector<std::vector<ag::LmPoint>> histories;
  for (std::size_t i = 0; i < configs.size(); ++i) {
    const ag::LmRun run = ag::train_lm(configs[i], data);
    std::cout << varied.values[i] << ": " << ag::lm_point_line(run.history.back(), run.history.back().step) << std::endl;
    curves.push_back(ag::lm_curve(varied.values[i], run.history));
    histories.push_back(run.history);
  }
  out.write("metrics.csv", ag::lm_compare_csv(varied.values, histories));
  std::string names;
  for (const std::string& v : varied.values) names += (names.empty() ? "" : " vs ") + v;
  const std::string title = values.dataset + ": GPT " + varied.option + " " + names;  // short: the plot is 700 px wide
  const ag::PlotStyle style{"step", false, data.bigram_val_loss, "bigram baseline"};
  return finish(curves, out, title, varied.option == "impl", tolerance, style);
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
                     "--norm (--model gpt: or --norm-placement; give a comma-separated list to one of them)\n"
                     "and overlays the curves.",
                     options, args, vm)) {
    return 0;
  }
  if (!(require_finite("tolerance", tolerance) >= 0)) {
    throw UsageError("--tolerance must be 0 or more, got " + std::to_string(tolerance));
  }
  resolve_model_options(vm, values);
  if (is_gpt(values)) return compare_gpt(vm, values, tolerance);
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
  std::string varied;
  for (const ag::Curve& c : curves) varied += (varied.empty() ? "" : " vs ") + c.label;
  const std::string title = values.dataset + ": " + (vary_impl ? norms[0] + " " : "norm ") + varied +
                            " (same seed, same initial weights)";
  return finish(curves, out, title, vary_impl, tolerance);
}

}  // namespace cli
