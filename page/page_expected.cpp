// The native build of the page's computation: `page_expected HASH` prints the
// JSON the WebAssembly page gets for that URL hash, from the same C++ source,
// so the browser test compares the page with the native engine;
// `page_expected model 'sample=1&word=em'` prints the trained GPT's part;
// `page_expected -` reads the hash from the standard input (a batch too long
// for one command-line argument, 128 KB on Linux).
#include <iostream>
#include <sstream>
#include <string>

#include "page/views.h"

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "model") {
    std::cout << page::compute_model(argv[2]) << "\n";
    return 0;
  }
  if (argc != 2) {
    std::cerr << "usage: page_expected 'x=3,1,5,7&gamma=2&beta=1' | page_expected model 'sample=1&word=em'\n";
    return 2;
  }
  std::ostringstream in;
  if (std::string(argv[1]) == "-") in << std::cin.rdbuf();
  const std::string hash = std::string(argv[1]) == "-" ? in.str() : std::string(argv[1]);
  std::cout << page::compute(hash) << "\n";
  return 0;
}
