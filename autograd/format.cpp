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

}  // namespace ag
