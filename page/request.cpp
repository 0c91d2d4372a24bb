#include "page/request.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <vector>

#include "autograd/text.h"
#include "data/csv.h"

namespace page {

namespace {

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::string part;
  for (char c : text) {
    if (c == separator) {
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

// Counted before parsing, so that a pasted megabyte is refused at once: each
// run of characters between separators is one number (or one bad item).
void require_small(const std::string& text, const std::string& field) {
  std::size_t items = 0;
  bool inside = false;
  for (char c : text) {
    const bool separator = c == ',' || c == ';' || c == ' ' || c == '\t' || c == '\r' || c == '\n';
    items += !separator && !inside;
    inside = !separator;
  }
  if (items > kMaxNumbers) {
    throw PageError(field + ": " + std::to_string(items) + " numbers; the page takes at most " + std::to_string(kMaxNumbers) +
                    " (rows x features; `autograd layernorm --input-file` reads more)");
  }
}

// x through the CLI's own grammar (ag::parse_matrix), then the page's limits.
arma::mat parse_x(const std::string& text) {
  require_small(text, "x");
  arma::mat x = ag::parse_matrix(text, "x");
  if (x.n_cols > kMaxFeatures) {
    throw PageError("x: " + std::to_string(x.n_cols) + " features; the page takes at most " +
                    std::to_string(kMaxFeatures) + " per row");
  }
  return x;
}

// A field's text, or what an empty one means (kFields).
std::string text_of(const std::map<std::string, std::string>& fields, const std::string& name) {
  const auto it = fields.find(name);
  if (it != fields.end() && !trim(it->second).empty()) return it->second;
  for (const Field& f : kFields) {
    if (name == f.name) return f.empty_means;
  }
  throw std::logic_error("page: no field " + name);
}

// gamma or beta: one value for every feature, or exactly D values.
arma::mat parse_per_feature(const std::map<std::string, std::string>& fields, const std::string& name, arma::uword D) {
  const std::string text = text_of(fields, name);
  require_small(text, name);
  const arma::mat v = ag::parse_matrix(text, name);
  if (v.n_elem == 1) return arma::mat(1, D, arma::fill::value(v(0)));
  if (v.n_rows != 1 || v.n_cols != D) {
    throw PageError(name + ": " + std::to_string(v.n_elem) + " values for " + std::to_string(D) +
                    " features; give one value (every feature) or " + std::to_string(D) + " in one row");
  }
  return v;
}

[[noreturn]] void unknown_field(const std::string& key) {
  std::vector<std::string> known;
  for (const Field& f : kFields) known.push_back(f.name);
  const std::string shown = key.size() > 40 ? key.substr(0, 40) + "..." : key;
  throw PageError("unknown field '" + shown + "'" + ag::did_you_mean(key, known) + "; the page reads " + ag::join(known, ", "));
}

std::map<std::string, std::string> parse_fields(const std::string& hash) {
  std::map<std::string, std::string> fields;
  for (const std::string& pair : split(hash, '&')) {
    if (trim(pair).empty()) continue;
    const auto eq = pair.find('=');
    const std::string key = trim(pair.substr(0, eq));
    if (std::none_of(std::begin(kFields), std::end(kFields), [&](const Field& f) { return key == f.name; })) {
      unknown_field(key);
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
  const auto x = fields.find(has_rows ? "rows" : "x");
  r.x = parse_x(x == fields.end() ? "" : x->second);  // the page calls both x
  const arma::uword D = r.x.n_cols;
  r.gamma = parse_per_feature(fields, "gamma", D);
  r.beta = parse_per_feature(fields, "beta", D);
  r.eps = ag::parse_number(text_of(fields, "eps"), "eps");
  if (!(r.eps > 0)) throw PageError("eps: must be greater than 0 (it keeps sqrt(var + eps) away from 0)");
  r.dy_default = text_of(fields, "dy").empty();
  r.dy = r.dy_default ? arma::mat(arma::regspace<arma::rowvec>(1, static_cast<double>(D))) : parse_per_feature(fields, "dy", D);
  const double s = ag::parse_number(text_of(fields, "steps"), "steps");
  if (s != std::floor(s) || s < 0 || s > 1000) throw PageError("steps: a whole number from 0 to 1000");
  r.steps = static_cast<int>(s);
  return r;
}

}  // namespace page
