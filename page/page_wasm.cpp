// The WebAssembly entry point: the page calls page_compute(hash) on every
// keystroke and JSON.parses what it returns (valid until the next call);
// page_model(hash) is the same for the trained GPT's part.
#include <string>

#include "page/views.h"

extern "C" const char* page_compute(const char* hash) {
  static std::string answer;
  answer = page::compute(hash);
  return answer.c_str();
}

extern "C" const char* page_model(const char* hash) {
  static std::string answer;
  answer = page::compute_model(hash);
  return answer.c_str();
}
