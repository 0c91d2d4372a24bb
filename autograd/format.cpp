#include "autograd/format.h"

#include <cmath>
#include <cstdio>
#include <iomanip>
#include <sstream>

namespace ag {

std::string format_number(double v, int precision) {
  std::ostringstream os;
  os << std::setprecision(precision) << v;
  return os.str();
}

std::string exact_number(double v) {
  if (std::isnan(v)) return "nan";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.17g", v);
  return buffer;
}

std::string one_line(const std::string& text) {
  std::string line = text;
  for (char& c : line) c = c == '\n' ? ' ' : c;
  const std::size_t end = line.find_last_not_of(' ');
  return end == std::string::npos ? "" : line.substr(0, end + 1);
}

namespace {

// The length of the valid UTF-8 sequence starting at text[at] (1-4), or 0 when
// it is not one: overlong forms, surrogates and code points above U+10FFFF included.
std::size_t utf8_length(const std::string& text, std::size_t at) {
  const unsigned char c = static_cast<unsigned char>(text[at]);
  std::size_t n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;
  if (n == 0 || c > 0xf4 || c < 0xc2 || at + n > text.size()) return 0;
  for (std::size_t i = 1; i < n; ++i) {
    if ((static_cast<unsigned char>(text[at + i]) & 0xc0) != 0x80) return 0;
  }
  const unsigned char c1 = static_cast<unsigned char>(text[at + 1]);
  if ((c == 0xe0 && c1 < 0xa0) || (c == 0xed && c1 > 0x9f) || (c == 0xf0 && c1 < 0x90) || (c == 0xf4 && c1 > 0x8f)) {
    return 0;
  }
  return n;
}

}  // namespace

std::string printable(const std::string& text) {
  static const char hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += text[i++];
      continue;
    }
    const std::size_t n = c >= 0x80 ? utf8_length(text, i) : 0;
    // U+0080-U+009F, the C1 controls, are 0xc2 0x80-0x9f in UTF-8.
    if (n > 0 && !(c == 0xc2 && static_cast<unsigned char>(text[i + 1]) < 0xa0)) {
      out.append(text, i, n);
      i += n;
      continue;
    }
    out += {'\\', 'x', hex[c >> 4], hex[c & 15]};
    ++i;
  }
  return out;
}

}  // namespace ag
