// A small JSON writer for the explorer's answers: numbers with 17 significant
// digits (a double read back is the same double), a non-finite number as null.
#pragma once

#include <armadillo>

#include <string>

namespace explorer {

std::string quoted(const std::string& s);
std::string number(double v);
// [[row 1], [row 2], ...]; null for an empty matrix.
std::string matrix(const arma::mat& m);

// Builds one JSON object: {"key": value, ...}, values already written as JSON.
class Object {
 public:
  Object& raw(const std::string& key, const std::string& json);
  Object& text(const std::string& key, const std::string& s) { return raw(key, quoted(s)); }
  Object& num(const std::string& key, double v) { return raw(key, number(v)); }
  Object& mat(const std::string& key, const arma::mat& m) { return raw(key, matrix(m)); }
  std::string str() const { return out_ + "}"; }

 private:
  std::string out_ = "{";
};

// Decodes %XX escapes (a URL hash as the browser gives it); '+' stays '+', the language's plus.
std::string url_decode(const std::string& s);

}  // namespace explorer
