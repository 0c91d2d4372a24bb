#include "assignments/grading/banned.h"

#include <cctype>
#include <set>
#include <vector>

namespace grading {

namespace {

struct Token {
  std::string text;
  int line;
};

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Translation phase 2 (a backslash before a newline joins the lines), keeping a newline per
// joined line at the end of the joined one so that line numbers still count the file's lines.
std::string joined(const std::string& s) {
  std::string out;
  int owed = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size() && s[i + 1] == '\n') {
      ++i;
      ++owed;
    } else if (s[i] == '\n') {
      out.append(std::size_t(owed) + 1, '\n');
      owed = 0;
    } else {
      out += s[i];
    }
  }
  return out;
}

// Where the comment or the string or character literal starting at i ends (one past it); i when none starts there.
std::size_t skip_literal(const std::string& s, std::size_t i) {
  if (s.compare(i, 2, "//") == 0) return s.find('\n', i) == std::string::npos ? s.size() : s.find('\n', i);
  if (s.compare(i, 2, "/*") == 0) return s.find("*/", i + 2) == std::string::npos ? s.size() : s.find("*/", i + 2) + 2;
  if (s[i] != '"' && s[i] != '\'') return i;
  for (std::size_t j = i + 1; j < s.size(); ++j) {
    if (s[j] == '\\') ++j;
    else if (s[j] == s[i] || s[j] == '\n') return j + 1;
  }
  return s.size();
}

// A raw string's end, from its opening quote: "delim( ... )delim".
std::size_t skip_raw(const std::string& s, std::size_t quote) {
  const std::size_t open = s.find('(', quote + 1);
  if (open == std::string::npos) return s.size();
  const std::string close = ")" + s.substr(quote + 1, open - quote - 1) + "\"";
  const std::size_t end = s.find(close, open);
  return end == std::string::npos ? s.size() : end + close.size();
}

std::size_t pp_number_end(const std::string& s, std::size_t j) {
  while (j < s.size() && (ident_char(s[j]) || s[j] == '.' || s[j] == '\'' ||
                          ((s[j] == '+' || s[j] == '-') && std::string("eEpP").find(s[j - 1]) != std::string::npos))) {
    ++j;
  }
  return j;
}

// #line, or GCC's "# 12" form, at the start of a line.
bool line_directive(const std::string& s, std::size_t i) {
  std::size_t k = i + (s[i] == '#' ? 1 : 2);
  while (k < s.size() && (s[k] == ' ' || s[k] == '\t')) ++k;
  return s.compare(k, 4, "line") == 0 || (k < s.size() && std::isdigit(static_cast<unsigned char>(s[k])));
}

// Identifiers, pp-numbers (digit separators and exponents' signs included), ##, %:%: and
// #line, and every other character as a token of its own, each with its line.
std::vector<Token> tokens(const std::string& text) {
  const std::string s = joined(text);
  std::vector<Token> out;
  int line = 1;
  bool line_start = true;
  auto pass = [&](std::size_t from, std::size_t to) {
    for (std::size_t k = from; k < to; ++k) line += s[k] == '\n';
  };
  for (std::size_t i = 0; i < s.size();) {
    const char c = s[i];
    if (const std::size_t past = skip_literal(s, i); past != i) {
      pass(i, past);
      i = past;
      continue;
    }
    std::size_t j = i + 1;
    if (std::isdigit(static_cast<unsigned char>(c)) || (c == '.' && j < s.size() && std::isdigit(static_cast<unsigned char>(s[j])))) {
      j = pp_number_end(s, j);
      out.push_back({s.substr(i, j - i), line});
    } else if (ident_char(c)) {
      while (j < s.size() && ident_char(s[j])) ++j;
      const std::string word = s.substr(i, j - i);
      static const std::set<std::string> raw = {"R", "uR", "UR", "LR", "u8R"};
      if (raw.count(word) && j < s.size() && s[j] == '"') {
        const std::size_t past = skip_raw(s, j);
        pass(j, past);
        j = past;
      } else {
        out.push_back({word, line});
      }
    } else if (s.compare(i, 2, "##") == 0 || s.compare(i, 4, "%:%:") == 0) {
      j = i + (c == '#' ? 2 : 4);
      out.push_back({s.substr(i, j - i), line});
    } else if (line_start && (c == '#' || s.compare(i, 2, "%:") == 0) && line_directive(s, i)) {
      out.push_back({"#line", line});
    } else if (!std::isspace(static_cast<unsigned char>(c))) {
      out.push_back({std::string(1, c), line});  // punctuation: `long) * double(` is not `long double`
    }
    if (c == '\n') ++line;
    if (!std::isspace(static_cast<unsigned char>(c)) || c == '\n') line_start = c == '\n';
    i = j;
  }
  return out;
}

// A number with an imaginary suffix (1e-20i, 1.0if, 2il): a std::complex literal.
bool imaginary(std::string n) {
  std::string digits;
  for (char c : n) {
    if (c != '\'') digits += c;
  }
  const bool hex = digits.size() > 1 && (digits[1] == 'x' || digits[1] == 'X');
  const auto ends = [&](const std::string& suffix) {
    return digits.size() > suffix.size() && digits.compare(digits.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return ends("i") || ends("il") || (!hex && ends("if"));
}

std::string named(const std::vector<Token>& t, std::size_t k) {
  static const std::set<std::string> names = {
      "complex", "_Complex", "__complex__", "_Complex_I", "complex_literals", "__real__", "__imag__", "polar",
      "__float128", "_Float128", "__float80", "_Float64x", "_Float128x", "__ibm128"};
  const std::string& w = t[k].text;
  if (w == "##" || w == "%:%:") return "token pasting (" + w + ")";
  if (w == "#line") return "a #line directive";
  if (names.count(w)) {
    const auto before = [&](std::size_t back) { return k >= back ? t[k - back].text : std::string(); };
    if (w == "complex" && before(1) == ":" && before(2) == ":" && before(3) == "std") return "std::complex";
    if (w == "complex" && before(1) == "<" && before(2) == "include") return "<complex>";
    return w;
  }
  if (w.rfind("cx_", 0) == 0) return "Armadillo's complex type " + w;
  if (std::isdigit(static_cast<unsigned char>(w[0])) || w[0] == '.') return imaginary(w) ? "the imaginary literal " + w : "";
  const bool long_double = (w == "long" || w == "double") && k + 1 < t.size() &&
                           ((w == "long" && t[k + 1].text == "double") || (w == "double" && t[k + 1].text == "long"));
  return long_double ? "long double" : "";
}

}  // namespace

std::string banned_use(const std::string& source) {
  const std::vector<Token> t = tokens(source);
  for (std::size_t k = 0; k < t.size(); ++k) {
    if (const std::string what = named(t, k); !what.empty()) return "uses " + what + " (line " + std::to_string(t[k].line) + ")";
  }
  return "";
}

}  // namespace grading
