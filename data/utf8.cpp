#include "data/utf8.h"

#include <cstdio>

namespace ag {

namespace {

std::string code_point(char32_t c) {
  char text[16];
  std::snprintf(text, sizeof text, "U+%04X", static_cast<unsigned>(c));
  return text;
}

std::string bytes_of(std::string_view s, std::size_t i, std::size_t n) {
  std::string text = n == 1 ? "byte" : "bytes";
  for (std::size_t k = 0; k < n && i + k < s.size(); ++k) text += " " + hex_byte(static_cast<unsigned char>(s[i + k]));
  return text;
}

// The length a lead byte announces: 0 for a continuation byte (10xxxxxx) or 0xF8 and above.
std::size_t announced_length(unsigned char c) {
  if (c < 0x80) return 1;
  if (c < 0xC0) return 0;
  if (c < 0xE0) return 2;
  if (c < 0xF0) return 3;
  if (c < 0xF8) return 4;
  return 0;
}

}  // namespace

std::string hex_byte(unsigned char c) {
  const char* digits = "0123456789abcdef";
  return std::string("0x") + digits[c >> 4] + digits[c & 15];
}

std::size_t text_character(std::string_view s, std::size_t i, char32_t& code, std::string& why) {
  const unsigned char lead = static_cast<unsigned char>(s[i]);
  const std::size_t n = announced_length(lead);
  if (n == 0) {
    why = bytes_of(s, i, 1) + (lead < 0xC0 ? " (a continuation byte without a lead byte)" : " (never in UTF-8)");
    return 0;
  }
  code = n == 1 ? lead : lead & (0x7F >> n);
  for (std::size_t k = 1; k < n; ++k) {
    if (i + k >= s.size() || (static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) {
      why = bytes_of(s, i, k) + " (a UTF-8 sequence cut short)";
      return 0;
    }
    code = (code << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  }
  static const char32_t kShortest[] = {0, 0, 0x80, 0x800, 0x10000};  // below these, a shorter form exists
  std::string what;
  if (code < kShortest[n]) {
    what = "an overlong encoding of " + code_point(code);
  } else if (code >= 0xD800 && code <= 0xDFFF) {
    what = "a UTF-16 surrogate, " + code_point(code);
  } else if (code > 0x10FFFF) {
    what = "above U+10FFFF, the last code point";
  } else if ((code < 0x20 && code != '\t') || code == 0x7F) {
    what = "a control character, " + code_point(code);
  } else if (code >= 0x80 && code <= 0x9F) {
    what = "a C1 control character, " + code_point(code);
  }
  if (what.empty()) return n;
  why = bytes_of(s, i, n) + " (" + what + ")";
  return 0;
}

}  // namespace ag
