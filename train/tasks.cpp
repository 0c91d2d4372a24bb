#include "train/tasks.h"

#include "autograd/error.h"

namespace ag {

Dataset load_table(const RunConfig& config) {
  Dataset data = make_dataset(config.dataset, config.seed, config.label_column, config.generated);
  if (data.size() < 2) throw DataError(config.dataset + ": needs at least 2 samples, has " + std::to_string(data.size()));
  return data;
}

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
