#include "assignments/kit/spec.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "autograd/error.h"
#include "autograd/text.h"
#include "assignments/kit/zoo_hints.h"

namespace kit {

namespace fs = std::filesystem;

namespace {

std::string trim(const std::string& s) {
  const std::size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t\r") - a + 1);
}

std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

double number(const std::string& text, const std::string& where) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0') throw ag::DataError(where + ": expected a number, got '" + text + "'");
  return v;
}

// "1e-12": a tolerance, finite and above 0.
double tolerance(const std::string& text, const std::string& where) {
  const double v = number(text, where);
  if (!std::isfinite(v) || v <= 0) {
    throw ag::DataError(where + ": expected tolerance = a number above 0 (the default is 1e-13), got '" + text + "'");
  }
  return v;
}

// "dx 2 dgamma 1 tape 3": pairs of a gradient (or "tape") and a whole number of points from 1 to 100.
std::map<std::string, int> points(const std::string& value, const std::string& where) {
  const std::vector<std::string> w = words(value);
  if (w.empty() || w.size() % 2 != 0) {
    throw ag::DataError(where + ": expected 'points = GRADIENT N [GRADIENT N ...]' (dx 2 tape 3), got '" + value + "'");
  }
  std::map<std::string, int> out;
  for (std::size_t k = 0; k < w.size(); k += 2) {
    const double v = number(w[k + 1], where);
    if (v < 1 || v > 100 || v != int(v)) {
      throw ag::DataError(where + ": expected the points of " + w[k] + " to be a whole number from 1 to 100, got '" +
                          w[k + 1] + "'");
    }
    out[w[k]] = int(v);
  }
  return out;
}

// "2": a number of cases (check_settings checks that the spec has that many).
std::size_t hidden(const std::string& value, const std::string& where) {
  const double v = number(value, where);
  if (!(v >= 0 && v <= 1000) || v != double(std::size_t(v))) {
    throw ag::DataError(where + ": expected hidden = a number of cases, got '" + value + "'");
  }
  return std::size_t(v);
}

// "layernorm": one of hint_names(), else a refusal that lists them (and the nearest).
std::string hints(const std::string& value, const std::string& where) {
  const std::vector<std::string>& known = hint_names();
  if (std::find(known.begin(), known.end(), value) != known.end()) return value;
  throw ag::DataError(where + ": unknown hints '" + value + "'" + ag::did_you_mean(value, known) + "; the hints are " +
                      ag::join(known, ", "));
}

// "label | N=3 D=5 | x+50"
CaseSpec parse_case(const std::string& value, const std::string& where) {
  std::vector<std::string> parts;
  std::istringstream in(value);
  for (std::string p; std::getline(in, p, '|');) parts.push_back(trim(p));
  if (parts.size() < 2 || parts[0].empty()) {
    throw ag::DataError(where + ": expected 'case = LABEL | N=3 D=5 [| x+50]', got '" + value + "'");
  }
  CaseSpec c;
  c.label = parts[0];
  for (const std::string& d : words(parts[1])) {
    const std::size_t eq = d.find('=');
    const double v = eq == std::string::npos ? -1 : number(d.substr(eq + 1), where);
    if (eq == std::string::npos || v < 1 || v > 64 || v != unsigned(v)) {
      throw ag::DataError(where + ": expected a dimension NAME=SIZE with SIZE in 1..64, got '" + d + "'");
    }
    c.dims[d.substr(0, eq)] = unsigned(v);
  }
  for (std::size_t k = 2; k < parts.size(); ++k) {
    const std::size_t plus = parts[k].find('+');
    if (plus == std::string::npos) throw ag::DataError(where + ": expected an offset NAME+VALUE, got '" + parts[k] + "'");
    c.offsets[trim(parts[k].substr(0, plus))] = number(trim(parts[k].substr(plus + 1)), where);
  }
  return c;
}

void set_field(ExerciseSpec& s, const std::string& key, const std::string& value, const std::string& where) {
  if (key == "title") s.title = value;
  else if (key == "forward") {
    s.forward = value;
    s.forward_at = where;
  }
  else if (key == "kind") {
    if (value != "backward" && value != "jvp") throw ag::DataError(where + ": expected kind = backward or jvp, got '" + value + "'");
    s.kind = value;
  }
  else if (key == "header") s.header = value;
  else if (key == "hints") s.hints = hints(value, where);
  else if (key == "tolerance") s.tolerance = tolerance(value, where);
  else if (key == "points") {
    for (const auto& [gradient, n] : points(value, where)) s.points[gradient] = n;
  } else if (key == "hidden") s.hidden = hidden(value, where);
  else if (key == "eps") s.eps = number(value, where);
  else if (key == "sends") s.sends = words(value);
  else if (key == "given") s.given = words(value);
  else if (key == "tape") s.tape = value == "yes";
  else if (key == "banned") {
    if (value != "none" && value != "default") throw ag::DataError(where + ": expected banned = default or none, got '" + value + "'");
    s.banned = value == "default";
  }
  else if (key == "case") s.cases.push_back(parse_case(value, where));
  else if (key == "input") {
    const std::vector<std::string> w = words(value);
    if (w.size() != 5) throw ag::DataError(where + ": expected 'input = NAME ROWS COLS LO HI', got '" + value + "'");
    s.inputs.push_back({w[0], w[1], w[2], number(w[3], where), number(w[4], where)});
  } else {
    throw ag::DataError(where + ": unknown key '" + key +
                        "' (expected title, kind, forward, header, hints, eps, input, sends, given, case, tape, banned, "
                        "tolerance, points or hidden)");
  }
}

// What only the whole spec tells: `points` names a gradient that is not given, or the tape check
// of a spec that has one; `hidden` is at most the number of cases. `at`: each key's last line.
void check_settings(const ExerciseSpec& s, const std::map<std::string, std::string>& at) {
  for (const auto& [name, n] : s.points) {
    const bool gradient = std::any_of(s.inputs.begin(), s.inputs.end(), [&](const InputSpec& i) { return "d" + i.name == name; });
    const bool given = std::find(s.given.begin(), s.given.end(), name) != s.given.end();
    if ((!gradient && !(name == "tape" && s.tape)) || given) {
      std::string known;
      for (const InputSpec& i : s.inputs) {
        if (std::find(s.given.begin(), s.given.end(), "d" + i.name) == s.given.end()) known += (known.empty() ? "d" : ", d") + i.name;
      }
      throw ag::DataError(at.at("points") + ": points for '" + name + "', which is " +
                          (given ? "given (worth no points)" : "no check") + "; the checks are " + known +
                          (s.tape ? " and tape" : ""));
    }
  }
  if (s.hidden > s.cases.size()) {
    throw ag::DataError(at.at("hidden") + ": hidden = " + std::to_string(s.hidden) + ", but the spec has " +
                        std::to_string(s.cases.size()) + " cases");
  }
}

void check_complete(const ExerciseSpec& s, const std::string& file) {
  if (s.title.empty() || s.forward.empty() || s.inputs.empty() || s.sends.empty() || s.cases.empty()) {
    throw ag::DataError(file + ": an exercise needs a title, a forward, an input, sends and a case");
  }
  for (const std::string& w : s.sends) {
    const bool input = std::any_of(s.inputs.begin(), s.inputs.end(), [&](const InputSpec& i) { return i.name == w; });
    if (!input && w != "y" && w != "dy" && w != "eps") {
      throw ag::DataError(file + ": sends '" + w + "', which is neither an input nor y, dy or eps");
    }
  }
  const bool sends_dy = std::find(s.sends.begin(), s.sends.end(), "dy") != s.sends.end();
  if (s.kind == "jvp" && (s.tape || sends_dy)) {
    throw ag::DataError(file + ": a jvp exercise is sent tangents, not dy, and has no tape check: say tape = no");
  }
  for (const CaseSpec& c : s.cases) {
    for (const InputSpec& i : s.inputs) {
      dimension(s, c, i.rows);
      dimension(s, c, i.cols);
    }
  }
}

}  // namespace

const std::vector<std::string>& hint_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all = {"layernorm", "rmsnorm"};
    all.insert(all.end(), zoo_names().begin(), zoo_names().end());
    return all;
  }();
  return names;
}

int points_of(const ExerciseSpec& s, const std::string& gradient) {
  if (std::find(s.given.begin(), s.given.end(), gradient) != s.given.end()) return 0;
  const auto it = s.points.find(gradient);
  return it == s.points.end() ? 1 : it->second;
}

bool is_hidden(const ExerciseSpec& s, std::size_t k) {
  return k >= s.cases.size() ? s.hidden == s.cases.size() && s.hidden > 0 : k + s.hidden >= s.cases.size();
}

unsigned dimension(const ExerciseSpec& spec, const CaseSpec& c, const std::string& field) {
  if (!field.empty() && std::all_of(field.begin(), field.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) {
    return unsigned(std::stoul(field.substr(0, 3)));
  }
  const auto it = c.dims.find(field);
  if (it == c.dims.end()) {
    throw ag::DataError(spec.folder + "/exercise.spec: case '" + c.label + "' does not give the dimension '" + field + "'");
  }
  return it->second;
}

ExerciseSpec read_spec(const std::string& folder) {
  const std::string file = (fs::path(folder) / "exercise.spec").string();
  std::ifstream in(file);
  if (!in) throw ag::DataError("cannot read the exercise spec " + file);
  ExerciseSpec s;
  s.folder = folder;
  s.name = fs::path(folder).filename().string();
  std::map<std::string, std::string> at;
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    line = trim(line);
    if (line.empty() || line[0] == '#') continue;
    const std::string where = file + ":" + std::to_string(line_no);
    const std::size_t eq = line.find('=');
    if (eq == std::string::npos) throw ag::DataError(where + ": expected 'key = value', got '" + line + "'");
    const std::string key = trim(line.substr(0, eq));
    set_field(s, key, trim(line.substr(eq + 1)), where);
    at[key] = where;
  }
  if (s.header.empty()) s.header = s.name + ".h";
  check_complete(s, file);
  check_settings(s, at);
  return s;
}

std::vector<std::string> exercise_names(const std::string& assignments) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(assignments, ec)) {
    if (e.is_directory(ec) && fs::is_regular_file(e.path() / "exercise.spec", ec)) {
      names.push_back(e.path().filename().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace kit
