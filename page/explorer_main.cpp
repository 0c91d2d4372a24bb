// The explorer's answers, native: `explorer_expected HASH` prints the JSON the
// page's WebAssembly module gives for the same hash (the browser test compares them).
#include <iostream>

#include "page/explorer/explore.h"

int main(int argc, char** argv) {
  for (int k = 1; k < argc; ++k) std::cout << explorer::explore(argv[k]) << "\n";
  return 0;
}
