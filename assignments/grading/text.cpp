#include "assignments/grading/text.h"

namespace grading {

std::string as_text(const std::string& bytes, bool keep_newlines) {
  static const char hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size());
  for (char ch : bytes) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if ((c >= 0x20 && c < 0x7f) || c == '\t' || (c == '\n' && keep_newlines)) {
      out += ch;
    } else {
      out += {'\\', 'x', hex[c >> 4], hex[c & 15]};
    }
  }
  return out;
}

std::string cut_as_text(const std::string& text, std::size_t max) {
  if (text.size() <= max) return as_text(text);
  return as_text(text.substr(0, max)) + "\n[... " + std::to_string(text.size() - max) + " more bytes not shown]\n";
}

}  // namespace grading
