// The WebAssembly entry point: the page calls page_compute(hash) on every
// keystroke and JSON.parses what it returns; the numbers it names by index
// are doubles at page_numbers() (both valid until the next call).
// page_model(hash) is the same for the trained GPT's part, numbers in its JSON.
#include <string>
#include <vector>

#include "page/views.h"

namespace {
std::vector<double> numbers;
}

extern "C" const char* page_compute(const char* hash) {
  static std::string answer;
  answer = page::compute(hash, &numbers);
  return answer.c_str();
}

extern "C" const double* page_numbers() { return numbers.data(); }

extern "C" const char* page_model(const char* hash) {
  static std::string answer;
  answer = page::compute_model(hash);
  return answer.c_str();
}
