// The explorer's WebAssembly entry point: the page calls explorer_run(hash)
// on every keystroke and JSON.parses what it returns (valid until the next call).
#include <string>

#include "page/explorer/explore.h"

extern "C" const char* explorer_run(const char* hash) {
  static std::string answer;
  answer = explorer::explore(hash);
  return answer.c_str();
}
