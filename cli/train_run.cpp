#include "cli/train_run.h"

#include "cli/train_options.h"
#include "train/model_description.h"
#include "train/trainer.h"

namespace cli {

ag::TrainingTask& TrainRun::task() const {
  if (table) return *table;
  return *text;
}

RunData load_run_data(const ag::RunConfig& config) {
  RunData data;
  if (config.model == ag::ModelKind::Gpt) data.text = ag::prepare_lm_data(config);
  else data.table = load_table(config);
  return data;
}

TrainRun make_train_run(const ag::RunConfig& config, RunData data) {
  TrainRun run;
  run.config = config;
  if (config.model == ag::ModelKind::Gpt) run.text = std::make_unique<ag::TextTask>(config, std::move(data.text));
  else run.table = std::make_unique<ag::TableTask>(config, data.table);
  return run;
}

std::string checkpoint_metadata(const TrainRun& run) {
  if (run.table) return ag::describe_model(run.config, run.table->spec);
  return ag::describe_model(run.config, run.text->spec, run.text->data.text.vocab);
}

long long last_x(const TrainRun& run) {
  if (run.table) return run.config.epochs;
  return ag::total_steps(run.config, run.text->train_size());
}

ag::PlotStyle plot_style(const TrainRun& run) {
  if (run.table) return {};
  return {ag::TimeAxis::Step, false, run.text->data.bigram_val_loss, "bigram baseline"};
}

}  // namespace cli
