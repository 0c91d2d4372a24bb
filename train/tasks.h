// Either model's task from a config (--model mlp: train/table_task.h; gpt:
// train/text_task.h), so a program holds one ag::TrainingTask and asks it what
// to print, plot and save instead of asking which model it is.
#pragma once

#include <memory>

#include "train/config.h"
#include "train/table_task.h"
#include "train/text_task.h"

namespace ag {

// The data of a config's model, loaded once: a table, or text with its bigram
// baseline. Throws DataError for bad data, before anything is written.
struct TaskData {
  Dataset table;  // ModelKind::Mlp
  LmData text;    // ModelKind::Gpt
};
TaskData load_task_data(const RunConfig& config);

// The task on that data (moved in; `autograd compare` passes a copy to each of its runs).
std::unique_ptr<TrainingTask> make_task(const RunConfig& config, TaskData data);

}  // namespace ag
