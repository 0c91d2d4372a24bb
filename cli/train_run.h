// A run of `autograd train` or `autograd compare`, either model: the typed
// config, the task it trains (the data loaded once, handed in; the model
// built), and what the commands print and write about it.
#pragma once

#include <memory>
#include <string>

#include "train/config.h"
#include "train/plot.h"
#include "train/table_task.h"
#include "train/text_task.h"

namespace cli {

struct TrainRun {
  ag::RunConfig config;
  std::unique_ptr<ag::TableTask> table;  // --model mlp
  std::unique_ptr<ag::TextTask> text;    // --model gpt
  ag::TrainingTask& task() const;
};

// The data of `config` (a table, or text with its bigram baseline), loaded once.
// Throws DataError for bad data, before anything is written.
struct RunData {
  ag::Dataset table;
  ag::LmData text;
};
RunData load_run_data(const ag::RunConfig& config);
// The task on that data (moved in; compare passes a copy to each of its runs).
TrainRun make_train_run(const ag::RunConfig& config, RunData data);

// The checkpoint's description of the trained model (train/model_description.h).
std::string checkpoint_metadata(const TrainRun& run);
// The last x of the curves: the epochs, or the steps of a GPT.
long long last_x(const TrainRun& run);
// Epochs and a log loss axis for the MLP; steps, a linear axis and the bigram line for the GPT.
ag::PlotStyle plot_style(const TrainRun& run);

}  // namespace cli
