#include "page/request.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>
#include <vector>

namespace page {

namespace {

std::vector<std::string> split(const std::string& text, const std::string& separators) {
  std::vector<std::string> parts;
  std::string part;
  for (char c : text) {
    if (separators.find(c) != std::string::npos) {
      parts.push_back(part);
      part.clear();
    } else {
      part += c;
    }
  }
  parts.push_back(part);
  return parts;
}

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

// One finite double, the whole of `item`; `where` names it in the message.
double parse_number(const std::string& item, const std::string& where) {
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(item.c_str(), &end);
  if (item.empty() || *end != '\0') throw PageError(where + ": '" + item + "' is not a number");
  if (!std::isfinite(v) || errno == ERANGE) {
    if (std::isfinite(v) && std::fabs(v) < 1) return v;  // an underflow to (near) 0 is still that number
    throw PageError(where + ": '" + item + "' is not a finite double (the largest is about 1.8e308)");
  }
  return v;
}

// "3, 1 5,7" -> {3, 1, 5, 7}: commas and/or spaces between numbers.
std::vector<double> parse_list(const std::string& text, const std::string& field) {
  std::vector<double> values;
  std::string spaced = text;
  for (char& c : spaced) if (c == ',') c = '\x01';
  std::vector<std::string> items = split(spaced, "\x01");
  if (items.size() == 1 && trim(items[0]).find(' ') != std::string::npos) items = split(trim(items[0]), " ");
  if (items.size() > 1 && trim(items.back()).empty()) items.pop_back();  // "3, 1," while typing
  if (items.size() == 1 && trim(items[0]).empty()) return values;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string item = trim(items[i]);
    values.push_back(parse_number(item, field + ", item " + std::to_string(i + 1)));
  }
  return values;
}

arma::mat parse_rows(const std::string& text, const std::string& field) {
  std::vector<std::vector<double>> rows;
  for (const std::string& row : split(text, ";\n")) {
    if (trim(row).empty()) continue;  // a trailing ';' or a blank line
    rows.push_back(parse_list(row, field + " row " + std::to_string(rows.size() + 1)));
    if (rows.back().size() != rows.front().size()) {
      throw PageError(field + ": rows have different lengths (row 1 has " + std::to_string(rows.front().size()) +
                      " numbers, row " + std::to_string(rows.size()) + " has " +
                      std::to_string(rows.back().size()) + "); every sample needs the same features");
    }
  }
  if (rows.empty()) throw PageError(field + ": empty; type at least one row of numbers, e.g. 3, 1, 5, 7");
  arma::mat x(rows.size(), rows.front().size());
  for (arma::uword i = 0; i < x.n_rows; ++i)
    for (arma::uword j = 0; j < x.n_cols; ++j) x(i, j) = rows[i][j];
  return x;
}

// gamma or beta: one value for every feature, or exactly D values.
arma::mat parse_per_feature(const std::map<std::string, std::string>& fields, const std::string& name,
                            double fallback, arma::uword D) {
  auto it = fields.find(name);
  if (it == fields.end() || trim(it->second).empty()) return arma::mat(1, D, arma::fill::value(fallback));
  const std::vector<double> v = parse_list(it->second, name);
  if (v.size() == 1) return arma::mat(1, D, arma::fill::value(v[0]));
  if (v.size() != D) {
    throw PageError(name + ": " + std::to_string(v.size()) + " values for " + std::to_string(D) +
                    " features; give one value (every feature) or " + std::to_string(D));
  }
  return arma::mat(v).t();
}

std::map<std::string, std::string> parse_fields(const std::string& hash) {
  std::map<std::string, std::string> fields;
  for (const std::string& pair : split(hash, "&")) {
    if (trim(pair).empty()) continue;
    const auto eq = pair.find('=');
    const std::string key = trim(pair.substr(0, eq));
    if (key != "x" && key != "rows" && key != "gamma" && key != "beta" && key != "eps" && key != "dy" &&
        key != "steps") {
      throw PageError("unknown field '" + key + "' (known: x, rows, gamma, beta, eps, dy, steps)");
    }
    fields[key] = eq == std::string::npos ? "" : pair.substr(eq + 1);
  }
  return fields;
}

}  // namespace

Request parse_request(const std::string& hash) {
  const std::map<std::string, std::string> fields = parse_fields(hash);
  Request r;
  const bool has_rows = fields.count("rows") != 0;
  if (has_rows && fields.count("x") != 0) throw PageError("give x (one vector) or rows (a batch), not both");
  const std::string name = has_rows ? "rows" : "x";
  const auto x = fields.find(name);
  r.x = parse_rows(x == fields.end() ? "" : x->second, "x");  // the page calls both x
  const arma::uword D = r.x.n_cols;
  r.gamma = parse_per_feature(fields, "gamma", 1.0, D);
  r.beta = parse_per_feature(fields, "beta", 0.0, D);
  if (fields.count("eps") != 0 && !trim(fields.at("eps")).empty()) r.eps = parse_number(trim(fields.at("eps")), "eps");
  if (!(r.eps > 0)) throw PageError("eps: must be greater than 0 (it keeps sqrt(var + eps) away from 0)");
  r.dy = arma::regspace<arma::rowvec>(1, static_cast<double>(D));
  if (fields.count("dy") != 0 && !trim(fields.at("dy")).empty()) {
    r.dy = parse_per_feature(fields, "dy", 0.0, D);
    r.dy_default = false;
  }
  if (fields.count("steps") != 0 && !trim(fields.at("steps")).empty()) {
    const double s = parse_number(trim(fields.at("steps")), "steps");
    if (s != std::floor(s) || s < 0 || s > 1000) throw PageError("steps: a whole number from 0 to 1000");
    r.steps = static_cast<int>(s);
  }
  return r;
}

}  // namespace page
