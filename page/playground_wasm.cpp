// The training page's WebAssembly entry points (docs/training-page.md): the
// page JSON.parses what each returns (valid until the next call).
#include <string>

#include "page/playground/session.h"

namespace {
const char* keep(std::string text) {
  static std::string answer;
  answer = std::move(text);
  return answer.c_str();
}
}  // namespace

extern "C" const char* playground_settings() { return keep(playground::settings()); }
extern "C" const char* playground_start(const char* hash) { return keep(playground::start(hash)); }
extern "C" const char* playground_advance(int steps) { return keep(playground::advance(steps)); }
extern "C" const char* playground_experiment_start(const char* hash) { return keep(playground::experiment_start(hash)); }
extern "C" const char* playground_experiment_advance(int steps) { return keep(playground::experiment_advance(steps)); }
