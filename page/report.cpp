#include "page/report.h"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace page {

namespace {

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string matrix(const arma::mat& m) {
  std::string out = "[";
  for (arma::uword i = 0; i < m.n_rows; ++i) {
    out += i ? ",[" : "[";
    for (arma::uword j = 0; j < m.n_cols; ++j) out += (j ? "," : "") + number(m(i, j));
    out += "]";
  }
  return out + "]";
}

template <class Map, class Write>
std::string object(const Map& map, Write write) {
  std::string out = "{";
  bool first = true;
  for (const auto& [key, value] : map) {
    out += (first ? "" : ",") + quoted(key) + ":" + write(value);
    first = false;
  }
  return out + "}";
}

}  // namespace

void Report::put(const std::string& key, const arma::mat& value, const std::string& label) {
  if (!value.is_finite()) throw std::logic_error(key + ": a non-finite number reached the report");
  numbers[key] = value;
  if (!label.empty()) labels[key] = label;
}

void Report::put(const std::string& key, double value, const std::string& label) {
  put(key, arma::mat(1, 1, arma::fill::value(value)), label);
}

std::string Report::json() const {
  std::string out = "{\"error\":" + quoted(error);
  out += ",\"numbers\":" + object(numbers, matrix);
  out += ",\"labels\":" + object(labels, quoted);
  out += ",\"errors\":" + object(errors, quoted);
  out += ",\"tape\":[";
  for (std::size_t k = 0; k < tape.size(); ++k) {
    out += (k ? ",{" : "{") + std::string("\"key\":") + quoted(tape[k].key) + ",\"op\":" + quoted(tape[k].op) +
           ",\"inputs\":[";
    for (std::size_t i = 0; i < tape[k].inputs.size(); ++i) out += (i ? "," : "") + std::to_string(tape[k].inputs[i]);
    out += "]}";
  }
  return out + "]}";
}

}  // namespace page
