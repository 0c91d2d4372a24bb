// What `autograd train` prints while it trains. On a terminal: a bar that
// fills during each epoch (running loss, accuracy, time left), replaced by an
// evaluation's summary line (metrics_line) when there is one. Otherwise (a pipe, a log file, CI): only
// the summary lines, so logs stay readable.
#pragma once

#include <chrono>
#include <iosfwd>

#include "train/trainer.h"

namespace ag {

class Progress {
 public:
  // `last`: the epochs (TimeAxis::Epoch) or the steps (TimeAxis::Step) of the run, for the summary lines.
  Progress(std::ostream& out, bool terminal, TimeAxis axis, long long last);
  void step(const StepInfo& info);
  void eval(const Metrics& m);
  TrainCallbacks callbacks();

  static bool stdout_is_terminal();

 private:
  std::ostream& out_;
  bool terminal_;
  TimeAxis axis_;
  long long last_;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace ag
