// Numbers and messages as the library and the program print them, written once.
#pragma once

#include <string>

namespace ag {

// `v` as `std::ostream << std::setprecision(precision) << v` prints it: "0.1",
// "1e-05", "inf", "nan" (6 significant digits, the stream's default).
std::string format_number(double v, int precision = 6);

// `v` with 17 significant digits ("%.17g"), which reads back as the same
// double; NaN of either sign is "nan". For files read by a program.
std::string exact_number(double v);

// A message with line breaks (a multi-line report) as one line: each break a
// space, trailing blanks and breaks dropped.
std::string one_line(const std::string& text);

// Text read from a file (a checkpoint's description, a CSV field, a file name)
// as it may reach a terminal: every C0 control (newline and tab included), DEL,
// C1 control (U+0080-U+009F) and byte that is not part of valid UTF-8 written
// \xHH, so no escape sequence can clear the screen, retitle the window or hide
// text. Printable ASCII and valid UTF-8 otherwise pass as they are.
std::string printable(const std::string& text);

}  // namespace ag
