#include "bench/harness.h"

#include <algorithm>
#include <chrono>
#include <vector>

namespace bench {

namespace {
volatile double g_sink = 0;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}
}  // namespace

void evict_caches(std::size_t bytes) {
  static std::vector<double> buffer;
  buffer.assign(bytes / sizeof(double), 0.0);
  keep(buffer.data());
}

void consume(const arma::mat& m) {
  keep(m.memptr());
  double s = 0;
  for (arma::uword j = 0; j < m.n_cols; ++j) s += m(0, j);
  g_sink = g_sink + s;
}

double checksum() { return g_sink; }

Timing measure(const std::function<void()>& setup, const std::function<void()>& body,
               const Plan& plan) {
  // Warm-up: caches, page faults of fresh allocations, the allocator's free lists.
  double last = 0, warm = 0;
  for (int i = 0; i < plan.warmup || warm < plan.min_warmup_s; ++i) {
    if (setup) setup();
    if (plan.cold) evict_caches(plan.evict_bytes);
    const auto start = std::chrono::steady_clock::now();
    body();
    last = seconds_since(start);
    warm += last;
    if (i > 1000) break;
  }
  // At least plan.repeats runs; more for a fast case, within the time budget.
  int repeats = plan.repeats;
  if (last > 0) {
    const double fit = plan.budget_s / last;
    if (fit > repeats) repeats = static_cast<int>(std::min<double>(fit, plan.max_repeats));
  }
  std::vector<double> times;
  times.reserve(repeats);
  for (int i = 0; i < repeats; ++i) {
    if (setup) setup();
    if (plan.cold) evict_caches(plan.evict_bytes);
    const auto start = std::chrono::steady_clock::now();
    body();
    times.push_back(seconds_since(start));
  }
  std::sort(times.begin(), times.end());
  Timing t;
  t.repeats = repeats;
  t.min_s = times.front();
  t.max_s = times.back();
  const std::size_t n = times.size();
  t.median_s = n % 2 == 1 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
  return t;
}

}  // namespace bench
