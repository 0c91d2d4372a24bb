// What a student's program or its compiler wrote, as text that is safe to
// show: on a terminal (no escape sequence can clear a line, hide text or move
// the cursor) and in a CSV cell (no NUL, no carriage return).
#pragma once

#include <string>

namespace grading {

// Printable ASCII and tabs kept, newlines kept when `keep_newlines`; every
// other byte (ESC, CR, NUL, DEL, and every byte of 0x80 and above, so that no
// C1 control or invalid UTF-8 passes either) is written \xHH.
std::string as_text(const std::string& bytes, bool keep_newlines = true);

// The first `max` bytes of `text` as text, and a note of how much was cut.
std::string cut_as_text(const std::string& text, std::size_t max);

}  // namespace grading
