#include "page/explorer/json.h"

#include <cctype>
#include <cmath>
#include <cstdio>

#include "autograd/text.h"

namespace explorer {

std::string quoted(const std::string& s) { return ag::json_string(s); }

std::string number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string matrix(const arma::mat& m) {
  if (m.is_empty()) return "null";
  std::string out = "[";
  for (arma::uword i = 0; i < m.n_rows; ++i) {
    out += i ? ",[" : "[";
    for (arma::uword j = 0; j < m.n_cols; ++j) out += (j ? "," : "") + number(m(i, j));
    out += "]";
  }
  return out + "]";
}

Object& Object::raw(const std::string& key, const std::string& json) {
  out_ += (out_.size() > 1 ? "," : "") + quoted(key) + ":" + json;
  return *this;
}

std::string url_decode(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
    if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) && hex(s[i + 2])) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace explorer
