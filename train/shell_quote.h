// A string as one /bin/sh word, whatever it holds: single quotes keep every
// character (line breaks, backquotes, $), and a quote inside is '\''. Used
// wherever a command line is built: gnuplot's pipe, dot, the grader's compiler.
#pragma once

#include <string>

namespace ag {

inline std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace ag
