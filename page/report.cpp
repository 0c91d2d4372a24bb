#include "page/report.h"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "autograd/text.h"
#include "page/request.h"

namespace page {

namespace {

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string matrix(const arma::mat& m) {
  std::string out = "[";
  for (arma::uword i = 0; i < m.n_rows; ++i) {
    out += i ? ",[" : "[";
    for (arma::uword j = 0; j < m.n_cols; ++j) {
      if (j) out += ',';
      out += number(m(i, j));
    }
    out += "]";
  }
  return out + "]";
}

// The matrix's doubles appended to *store, row after row; the JSON says where.
std::string stored(const arma::mat& m, std::vector<double>& store) {
  const std::string at = std::to_string(store.size());
  for (arma::uword i = 0; i < m.n_rows; ++i) {
    for (arma::uword j = 0; j < m.n_cols; ++j) store.push_back(m(i, j));
  }
  return "{\"at\":" + at + ",\"rows\":" + std::to_string(m.n_rows) + ",\"cols\":" + std::to_string(m.n_cols) + "}";
}

template <class Map, class Write>
std::string object(const Map& map, Write write) {
  std::string out = "{";
  bool first = true;
  for (const auto& [key, value] : map) {
    out += (first ? "" : ",") + ag::json_string(key) + ":" + write(value);
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

std::string Report::json(std::vector<double>* store) const {
  std::string out = "{\"error\":" + ag::json_string(error) + ",\"fields\":[";
  for (const Field& f : kFields) {
    out += (&f == kFields ? "{" : ",{") + std::string("\"name\":") + ag::json_string(f.name) +
           ",\"empty\":" + ag::json_string(f.empty_means) + "}";
  }
  out += "],\"views\":" + object(views, [](const std::vector<std::string>& keys) {
    std::string list = "[";
    for (const std::string& k : keys) list += (list.size() > 1 ? "," : "") + ag::json_string(k);
    return list + "]";
  });
  if (store) {
    store->clear();
    out += ",\"numbers\":" + object(numbers, [&](const arma::mat& m) { return stored(m, *store); });
  } else {
    out += ",\"numbers\":" + object(numbers, matrix);
  }
  out += ",\"labels\":" + object(labels, ag::json_string);
  out += ",\"errors\":" + object(errors, ag::json_string);
  out += ",\"tape\":[";
  for (std::size_t k = 0; k < tape.size(); ++k) {
    out += (k ? ",{" : "{") + std::string("\"key\":") + ag::json_string(tape[k].key) + ",\"op\":" + ag::json_string(tape[k].op) +
           ",\"inputs\":[";
    for (std::size_t i = 0; i < tape[k].inputs.size(); ++i) out += (i ? "," : "") + std::to_string(tape[k].inputs[i]);
    out += "],\"rule\":" + ag::json_string(tape[k].rule) + "}";
  }
  return out + "]}";
}

}  // namespace page
