// One training run on the page, a slice of steps at a time: the settings'
// data, model and trainer (train/trainer.h, the one loop `autograd train`
// runs), and what the page draws after each slice, as JSON.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "page/playground/settings.h"
#include "train/table_task.h"
#include "train/trainer.h"

namespace playground {

constexpr int kGrid = 48;  // the decision boundary: P(class 1) on kGrid x kGrid points

// Per hidden layer (and the output layer) after the last step.
struct LayerStats {
  std::string name;          // "layer 1: Linear(2 -> 16), tanh"
  double mean = 0, sd = 0;   // its output over the training set (after the norm and activation)
  double grad_norm = 0;      // |dL/dW| of its Linear, the last step's
  double update_ratio = 0;   // |W after - W before| / |W before| of the last step
};

class Session {
 public:
  // Throws SettingsError for bad settings, or data the settings cannot train on.
  explicit Session(const Settings& settings);

  // Up to `steps` more steps (never past the target); stops at a divergence.
  void advance(long long steps);
  bool done() const { return !diverged_.empty() || trainer_->done(); }
  long long step() const { return trainer_->steps(); }

  // {"step", "train_loss", "val_accuracy", ..., "layers", "grid", "command", "done", "diverged"}.
  std::string report_json();
  // The points, once: {"train": [[x, y, label], ...], "validation": [...], "extent": [x0, x1, y0, y1]}.
  std::string points_json() const;

  ag::Evaluation train_evaluation();
  ag::Evaluation validation_evaluation();
  std::vector<LayerStats> layer_stats();
  // One step's tape (forward and loss on a batch), composed and fused:
  // {"composed": {"nodes", "saved_bytes"}, "fused": {...}} (batchnorm: composed only).
  std::string tape_json() const;
  arma::mat boundary();  // kGrid x kGrid, row i: y from top to bottom
  const std::string& diverged() const { return diverged_; }

 private:
  std::string divergence_site();
  Settings settings_;
  ag::Dataset data_;
  std::unique_ptr<ag::TableTask> task_;
  std::unique_ptr<ag::Trainer> trainer_;
  std::vector<arma::mat> before_;  // the weights before the last step
  std::string diverged_;
  double extent_[4] = {0, 0, 0, 0};
  ag::Tape tape_;
};

// The page's calls: start(hash) begins a run (replacing any), advance(k) steps
// it; both answer JSON, {"error": "..."} for bad settings.
std::string start(const std::string& hash);
std::string advance(long long steps);
std::string settings();

// An experiment's run, in a slot of its own (the page's run keeps training),
// a slice at a time so that the page answers between slices:
// experiment_start(hash) begins it ({"started": true} or {"error"}), and
// experiment_advance(k) trains up to k more steps: {"done": false, "step"} until
// its end, then {"done": true, "initial": train loss, "final": train loss (null
// when it diverged), "val_accuracy", "steps", "grad_norms": per layer, "diverged": "..."}.
std::string experiment_start(const std::string& hash);
std::string experiment_advance(long long steps);
// The same run in one call (native callers and tests).
std::string run_to_end(const std::string& hash);

}  // namespace playground
