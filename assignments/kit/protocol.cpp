#include "assignments/kit/protocol.h"

#include "autograd/format.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace kit {

namespace {

constexpr arma::uword kMaxSide = 4096, kMaxElements = 1 << 20;

// A short, printable quote of what the child sent instead of what was expected.
std::string quoted(const std::string& token) {
  std::string s = token.substr(0, 40);
  for (char& c : s) c = (c < 32 || c > 126) ? '?' : c;
  return "'" + s + (token.size() > 40 ? "...'" : "'");
}

// Reads whitespace-separated tokens; every read says what it expected.
class Reader {
 public:
  explicit Reader(const std::string& bytes) : in_(bytes) {}
  bool at_end() {
    in_ >> std::ws;
    return in_.peek() == std::char_traits<char>::eof();
  }
  std::string token(const std::string& expected) {
    std::string t;
    if (!(in_ >> t)) throw std::runtime_error("expected " + expected + ", got the end of the output");
    return t;
  }
  void word(const std::string& w) {
    const std::string t = token("'" + w + "'");
    if (t != w) throw std::runtime_error("expected '" + w + "', got " + quoted(t));
  }
  unsigned long count(const std::string& what, unsigned long max) {
    const std::string t = token(what);
    char* end = nullptr;
    const unsigned long v = std::strtoul(t.c_str(), &end, 10);
    if (t.empty() || t[0] == '-' || *end != '\0' || v > max) {
      throw std::runtime_error("expected " + what + " (0.." + std::to_string(max) + "), got " + quoted(t));
    }
    return v;
  }
  double value(const std::string& what) {
    const std::string t = token(what);
    char* end = nullptr;
    const double v = std::strtod(t.c_str(), &end);
    if (t.empty() || *end != '\0') throw std::runtime_error("expected " + what + ", got " + quoted(t));
    return v;  // nan and inf are read: the diagnosis names them (not finite)
  }
  std::string rest_of_line() {
    std::string line;
    std::getline(in_, line);
    return line.substr(line.find_first_not_of(' ') == std::string::npos ? line.size() : line.find_first_not_of(' '));
  }

 private:
  std::istringstream in_;
};

arma::mat read_matrix(Reader& r, const std::string& what) {
  const arma::uword rows = r.count("the rows of " + what, kMaxSide), cols = r.count("the columns of " + what, kMaxSide);
  if (rows * cols > kMaxElements) throw std::runtime_error(what + " is " + std::to_string(rows) + "x" +
                                                           std::to_string(cols) + ", more than the grader reads");
  arma::mat m(rows, cols);
  for (arma::uword i = 0; i < rows; ++i) {
    for (arma::uword j = 0; j < cols; ++j) m(i, j) = r.value("a number of " + what);
  }
  return m;
}

}  // namespace

std::string encode_cases(const std::vector<std::vector<arma::mat>>& sent) {
  std::string out = "autograd-grade 1\ncases " + std::to_string(sent.size()) + "\n";
  for (std::size_t k = 0; k < sent.size(); ++k) {
    out += "case " + std::to_string(k) + " " + std::to_string(sent[k].size()) + "\n";
    for (const arma::mat& m : sent[k]) {
      out += std::to_string(m.n_rows) + " " + std::to_string(m.n_cols) + "\n";
      for (arma::uword i = 0; i < m.n_rows; ++i) {
        for (arma::uword j = 0; j < m.n_cols; ++j) {
          out += (j ? " " : "") + ag::exact_number(m(i, j));
        }
        out += "\n";
      }
    }
  }
  return out;
}

ParsedAnswers parse_answers(const std::string& bytes, std::size_t cases, std::size_t grads) {
  ParsedAnswers p;
  p.answers.resize(cases);
  Reader r(bytes);
  std::size_t k = 0;
  try {
    if (r.at_end()) throw std::runtime_error("no answer at all (nothing on its standard output)");
    r.word("autograd-answer");
    r.word("1");
    for (; k < cases; ++k) {
      if (r.at_end()) return p;  // stopped early: the caller says why (a signal, an exit, a timeout)
      r.word("case");
      if (r.count("the case number", cases) != k) throw std::runtime_error("the cases are out of order");
      Answer a;
      const std::string t = r.token("the number of gradients or 'threw'");
      if (t == "threw") {
        a.threw = r.rest_of_line();
      } else if (t != std::to_string(grads)) {
        throw std::runtime_error(std::to_string(grads) + " gradients expected in case " + std::to_string(k) +
                                 ", got " + quoted(t));
      } else {
        for (std::size_t g = 0; g < grads; ++g) a.grads.push_back(read_matrix(r, "gradient " + std::to_string(g + 1)));
      }
      a.answered = true;
      p.answers[k] = a;
    }
    if (r.at_end()) return p;
    r.word("end");
    if (!r.at_end()) throw std::runtime_error("more output after the end mark");
    p.complete = true;
  } catch (const std::runtime_error& e) {
    p.error = "malformed answer: " + std::string(e.what()) + " (at case " + std::to_string(k) + ")";
    for (std::size_t j = k; j < cases; ++j) p.answers[j] = Answer{};
  }
  return p;
}

}  // namespace kit
