// What `autograd train` prints while it trains. On a terminal: a bar that
// fills during each epoch (running loss, accuracy, time left), replaced by the
// epoch's summary line when it ends. Otherwise (a pipe, a log file, CI): only
// the summary lines, so logs stay readable.
#pragma once

#include <chrono>
#include <iosfwd>

#include "train/trainer.h"

namespace ag {

class Progress {
 public:
  Progress(std::ostream& out, bool terminal, int epochs);
  void step(const StepInfo& info);
  void epoch(const EpochMetrics& m);
  TrainCallbacks callbacks();

  static bool stdout_is_terminal();

 private:
  std::ostream& out_;
  bool terminal_;
  int epochs_;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace ag
