// The child's main(): the grading protocol, trusted code inside an untrusted
// program. Reads "autograd-grade 1" cases from stdin and answers each one on
// the standard output it had at start, flushed case by case (a child that
// dies half-way still has its first answers graded). The student's own
// prints go to stderr, so they cannot break the frame.
//
//   in:  autograd-grade 1 / cases C / case K M / R C / values (one row per line) ... / end
//   out: autograd-answer 1 / case K G / R C / values ... (or: case K threw TEXT) / end
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <iostream>
#include <string>

#include "assignments/kit/child.h"

namespace {

bool read_matrix(std::istream& in, arma::mat& m) {
  arma::uword rows = 0, cols = 0;
  if (!(in >> rows >> cols) || rows > 4096 || cols > 4096) return false;
  m.set_size(rows, cols);
  for (arma::uword i = 0; i < rows; ++i) {
    for (arma::uword j = 0; j < cols; ++j) {
      if (!(in >> m(i, j))) return false;
    }
  }
  return true;
}

void write_matrix(std::FILE* out, const arma::mat& m) {
  std::fprintf(out, "%llu %llu\n", static_cast<unsigned long long>(m.n_rows), static_cast<unsigned long long>(m.n_cols));
  for (arma::uword i = 0; i < m.n_rows; ++i) {
    for (arma::uword j = 0; j < m.n_cols; ++j) std::fprintf(out, j ? " %.17g" : "%.17g", m(i, j));
    std::fprintf(out, "\n");
  }
}

// One line, printable: the text of an exception the student's code threw.
std::string one_line(std::string s) {
  for (char& c : s) c = (c < 32 || c > 126) ? ' ' : c;
  return s.substr(0, 300);
}

}  // namespace

int main() {
  std::cout.flush();
  std::FILE* frame = fdopen(::dup(1), "w");
  ::dup2(2, 1);  // from here on, the student's std::cout and printf go to stderr
  std::string word;
  int version = 0, cases = 0;
  if (frame == nullptr || !(std::cin >> word >> version) || word != "autograd-grade" || version != 1 ||
      !(std::cin >> word >> cases) || word != "cases") {
    std::fprintf(stderr, "child: not a grading input\n");
    return 3;
  }
  std::fprintf(frame, "autograd-answer 1\n");
  std::fflush(frame);
  for (int k = 0; k < cases; ++k) {
    int index = -1, count = 0;
    if (!(std::cin >> word >> index >> count) || word != "case" || index != k || count < 0 || count > 16) return 3;
    std::vector<arma::mat> sent(count);
    for (arma::mat& m : sent) {
      if (!read_matrix(std::cin, m)) return 3;
    }
    try {
      const std::vector<arma::mat> grads = kit_child::answer(sent);
      std::fprintf(frame, "case %d %zu\n", k, grads.size());
      for (const arma::mat& g : grads) write_matrix(frame, g);
    } catch (const std::exception& e) {
      std::fprintf(frame, "case %d threw %s\n", k, one_line(e.what()).c_str());
    }
    std::fflush(frame);
  }
  std::fprintf(frame, "end\n");
  return std::fclose(frame) == 0 ? 0 : 3;
}
