// The explorer's answers as JSON, and the URL hash that asks for them.
#include <algorithm>
#include <exception>
#include <iterator>
#include <map>

#include "autograd/text.h"
#include "page/explorer/exercise.h"
#include "page/explorer/explore.h"
#include "page/explorer/json.h"
#include "page/explorer/record.h"

namespace explorer {

namespace {

std::string shown(const arma::mat& m) { return m.n_elem > kShownNumbers ? "null" : matrix(m); }

std::string ids(const std::vector<std::size_t>& v) {
  std::string s = "[";
  for (std::size_t k = 0; k < v.size(); ++k) s += (k ? "," : "") + std::to_string(v[k]);
  return s + "]";
}

std::string node_json(const NodeReport& n) {
  return Object().num("id", double(n.id)).text("op", n.op).text("label", n.label).text("kind", n.kind)
      .text("attributes", n.attributes).raw("inputs", ids(n.inputs)).text("forward", n.forward)
      .text("backward", n.backward).text("tangent_rule", n.tangent_rule)
      .text("shape", ag::shape_str(n.value)).raw("value", shown(n.value)).raw("grad", shown(n.grad))
      .raw("tangent", shown(n.tangent)).raw("hvp", shown(n.hvp)).str();
}

std::string step_json(const BackwardStep& s) {
  std::string parts = "[";
  for (const BackwardPart& p : s.parts) {
    parts += (parts.size() > 1 ? "," : "") + Object().num("input", double(p.input)).raw("contribution", shown(p.contribution))
                                                 .raw("total", shown(p.total)).str();
  }
  return Object().num("node", double(s.node)).raw("parts", parts + "]").str();
}

const char* const kFields[] = {"program", "direction", "v", "exercise", "answer", "seed"};

std::map<std::string, std::string> fields_of(const std::string& hash) {
  std::map<std::string, std::string> fields;
  std::size_t start = hash.empty() || hash[0] != '#' ? 0 : 1;
  while (start < hash.size()) {
    const std::size_t end = std::min(hash.find('&', start), hash.size());
    const std::string pair = hash.substr(start, end - start);
    const std::size_t eq = pair.find('=');
    const std::string key = pair.substr(0, eq), value = eq == std::string::npos ? "" : url_decode(pair.substr(eq + 1));
    if (!key.empty()) {
      const std::vector<std::string> known(std::begin(kFields), std::end(kFields));
      if (std::find(known.begin(), known.end(), key) == known.end()) {
        throw ProgramError(1, "unknown field '" + key.substr(0, 40) + "' in the link" + ag::did_you_mean(key, known) +
                                  "; the explorer reads " + ag::join(known, ", "));
      }
      fields[key] = value;
    }
    start = end + 1;
  }
  return fields;
}

unsigned seed_of(const std::map<std::string, std::string>& f) {
  if (!f.count("seed")) return 2026;
  const std::string& s = f.at("seed");
  if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos) {
    throw ProgramError(1, "seed=" + s.substr(0, 20) + ": the seed is a whole number below 1000000000");
  }
  return unsigned(std::stoul(s));
}

}  // namespace

std::string Exploration::json() const {
  std::string n = "[", b = "[";
  for (const NodeReport& r : nodes) n += (n.size() > 1 ? "," : "") + node_json(r);
  for (const BackwardStep& s : backward) b += (b.size() > 1 ? "," : "") + step_json(s);
  return Object().text("error", "").raw("nodes", n + "]").raw("backward", b + "]").num("output", double(output))
      .text("output_name", output_name).text("note", note).text("direction", direction)
      .raw("v", direction.empty() ? "null" : shown(v)).str();
}

std::string explore(const std::string& hash) {
  try {
    const std::map<std::string, std::string> f = fields_of(hash);
    if (f.count("exercise")) {
      const std::string answer = f.count("answer") ? f.at("answer") : "";
      const unsigned seed = seed_of(f);
      try {
        return Object().text("error", "").raw("exercise", check_exercise(f.at("exercise"), answer, seed).json()).str();
      } catch (const ProgramError& e) {  // the statement still shows above the message
        return Object().text("error", e.what()).raw("exercise", check_exercise(f.at("exercise"), "", seed).json()).str();
      }
    }
    const std::string program = f.count("program") ? f.at("program") : "";
    const auto text = [&](const char* key) { return f.count(key) ? f.at(key) : std::string(); };
    if (!text("v").empty() && text("direction").empty()) throw ProgramError(1, "v: a direction's numbers need a direction (direction=NAME)");
    return explore_program(program, text("direction"), text("v")).json();
  } catch (const std::exception& e) {
    return Object().text("error", e.what()).str();
  }
}

}  // namespace explorer
