// Strict UTF-8, as text: what `--dataset FILE.txt` and a checkpoint's
// vocabulary may hold. A character is refused when its bytes are not UTF-8
// (a stray continuation byte, a sequence cut short, 0xF5 and above), when they
// are a form UTF-8 forbids (an overlong encoding such as E0 80 AF for '/', a
// UTF-16 surrogate U+D800-U+DFFF, a code point above U+10FFFF), and when the
// character is a control (C0 U+0000-U+001F but the tab, DEL U+007F, C1
// U+0080-U+009F): a terminal acts on those instead of printing them.
// (RFC 3629 section 3 and the Unicode Standard's table 3-7 of well-formed byte sequences.)
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ag {

// The byte length (1 to 4) of the text character at s[i] and its code point in
// `code`; 0 when there is none, with `why` saying what the bytes are instead,
// for instance "bytes 0xed 0xa0 0x80 (a UTF-16 surrogate, U+D800)".
std::size_t text_character(std::string_view s, std::size_t i, char32_t& code, std::string& why);

// "0x9b"
std::string hex_byte(unsigned char c);

}  // namespace ag
