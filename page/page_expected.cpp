// The native build of the page's computation: `page_expected HASH` prints the
// JSON the WebAssembly page gets for that URL hash, from the same C++ source,
// so the browser test compares the page with the native engine.
#include <iostream>

#include "page/views.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: page_expected 'x=3,1,5,7&gamma=2&beta=1'\n";
    return 2;
  }
  std::cout << page::compute(argv[1]) << "\n";
  return 0;
}
