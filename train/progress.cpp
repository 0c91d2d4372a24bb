#include "train/progress.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <ostream>

#include "train/metrics.h"

namespace ag {

Progress::Progress(std::ostream& out, bool terminal, TimeAxis axis, long long last)
    : out_(out), terminal_(terminal), axis_(axis), last_(last), start_(std::chrono::steady_clock::now()), last_draw_() {}

bool Progress::stdout_is_terminal() { return ::isatty(STDOUT_FILENO) != 0; }

void Progress::step(const StepInfo& info) {
  if (!terminal_) return;
  const auto now = std::chrono::steady_clock::now();
  // Redraw at most 20 times a second: drawing must not cost more than training.
  if (info.step != info.steps && now - last_draw_ < std::chrono::milliseconds(50)) return;
  last_draw_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double done = (info.epoch - 1) + static_cast<double>(info.step) / static_cast<double>(info.steps);
  const double left = elapsed / done * (info.epochs - done);
  const int width = 24;
  const int filled = static_cast<int>(width * info.step / info.steps);
  char text[200];
  std::snprintf(text, sizeof text, "\repoch %lld/%lld [%s%s] %zu/%zu  loss %.4f", info.epoch, info.epochs,
                std::string(filled, '#').c_str(), std::string(width - filled, '.').c_str(), info.step, info.steps,
                info.loss);
  out_ << text;
  if (!std::isnan(info.accuracy)) {
    std::snprintf(text, sizeof text, "  acc %.2f%%", 100 * info.accuracy);
    out_ << text;
  }
  std::snprintf(text, sizeof text, "  %.1fs left \x1b[K", left);
  out_ << text << std::flush;
}

void Progress::eval(const Metrics& m) {
  if (terminal_) out_ << "\r\x1b[K";  // clear the bar; the summary line takes its place
  out_ << metrics_line(m, axis_, last_) << "\n" << std::flush;
}

TrainCallbacks Progress::callbacks() {
  TrainCallbacks callbacks;
  callbacks.on_step = [this](const StepInfo& s) { step(s); };
  callbacks.on_eval = [this](const Metrics& m) { eval(m); };
  return callbacks;
}

}  // namespace ag
