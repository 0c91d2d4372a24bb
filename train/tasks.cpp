#include "train/tasks.h"

namespace ag {

TaskData load_task_data(const RunConfig& config) {
  TaskData data;
  if (config.model == ModelKind::Gpt) data.text = prepare_lm_data(config);
  else data.table = load_table(config);
  return data;
}

std::unique_ptr<TrainingTask> make_task(const RunConfig& config, TaskData data) {
  if (config.model == ModelKind::Gpt) return std::make_unique<TextTask>(config, std::move(data.text));
  return std::make_unique<TableTask>(config, data.table);
}

}  // namespace ag
