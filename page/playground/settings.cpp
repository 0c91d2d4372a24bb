#include "page/playground/settings.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "page/explorer/json.h"

namespace playground {

namespace {

// One key of the hash: a choice among names, a whole number or a number in a range.
struct Key {
  std::string name;
  std::string fallback;               // the default, as text
  std::vector<std::string> choices;   // empty: a number
  double lo = 0, hi = 0;              // a number's range
  bool whole = false, log = false;    // a count; drawn on a log slider
  std::string help;
  std::function<void(Settings&, const std::string&, double)> set;  // text for choices, the number otherwise
};

const std::vector<Key>& keys() {
  using S = Settings;
  using T = const std::string&;
  static const std::vector<Key> all = {
      {"dataset", "moons", {"moons", "circles", "spiral", "xor", "blobs"}, 0, 0, false, false, "the 2-D points to classify",
       [](S& s, T t, double) { s.config.dataset = t; }},
      {"points", "200", {}, 4, kMaxPoints, true, false, "points, training and validation together",
       [](S& s, T, double v) { s.config.generated.points = static_cast<long long>(v); }},
      {"noise", "0.1", {}, 0, 1, false, false, "how far the points stray from their shape",
       [](S& s, T, double v) { s.config.generated.noise = v; }},
      {"validation", "0.2", {}, 0.05, 0.5, false, false, "the fraction of the points held out",
       [](S& s, T, double v) { s.config.validation_fraction = v; }},
      {"depth", "2", {}, 0, kMaxDepth, true, false, "hidden layers", [](S& s, T, double v) { s.depth = static_cast<long long>(v); }},
      {"width", "16", {}, 1, kMaxWidth, true, false, "units in each hidden layer",
       [](S& s, T, double v) { s.width = static_cast<long long>(v); }},
      {"activation", "tanh", {"tanh", "relu", "gelu"}, 0, 0, false, false, "after each hidden Linear",
       [](S& s, T t, double) { s.config.activation = ag::parse_activation(t); }},
      {"norm", "none", {"none", "layernorm", "rmsnorm", "batchnorm"}, 0, 0, false, false, "after each hidden Linear",
       [](S& s, T t, double) { s.config.norm = ag::parse_norm(t); }},
      {"placement", "pre", {"pre", "post"}, 0, 0, false, false, "the norm before each activation (pre) or after it (post)",
       [](S& s, T t, double) { s.config.placement = ag::parse_placement(t); }},
      {"impl", "composed", {"composed", "fused"}, 0, 0, false, false, "the norm from primitive ops, or one fused node (batchnorm: composed only)",
       [](S& s, T t, double) { s.config.impl = ag::parse_impl(t); }},
      {"optimizer", "adam", {"sgd", "momentum", "adam", "adamw"}, 0, 0, false, false, "momentum: SGD with momentum 0.9",
       [](S& s, T t, double) { s.optimizer = t; }},
      {"lr", "0.01", {}, 1e-5, 10, false, true, "the learning rate", [](S& s, T, double v) { s.config.lr = v; }},
      {"wd", "0", {}, 0, 0.1, false, false, "weight decay", [](S& s, T, double v) { s.config.weight_decay = v; }},
      {"batch", "32", {}, 1, kMaxBatch, true, false, "points per step", [](S& s, T, double v) { s.config.batch_size = static_cast<long long>(v); }},
      {"init", "1", {}, 0.001, 100, false, true, "multiplies the initial weights (Kaiming's, Xavier's for tanh)",
       [](S& s, T, double v) { s.config.init_scale = v; }},
      {"seed", "0", {}, 0, 999999999, true, false, "draws the points, the split, the weights and the batches",
       [](S& s, T, double v) { s.config.seed = static_cast<std::uint64_t>(v); }},
      {"steps", "0", {}, 0, kMaxSteps, true, false, "train this many steps and stop (0: until paused)",
       [](S& s, T, double v) { s.target = static_cast<long long>(v); }},
  };
  return all;
}

const Key* find_key(const std::string& name) {
  for (const Key& k : keys()) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

std::string listed(const std::vector<std::string>& names) {
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i) text += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return text;
}

// The whole text must be the number: "1e-3" yes, "0.1x", "nan" and "" no.
double read_number(const Key& k, const std::string& text) {
  const std::string range = "from " + shortest(k.lo) + " to " + shortest(k.hi);
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  const bool number = !text.empty() && end == text.c_str() + text.size() && errno == 0 && std::isfinite(v);
  if (!number || (k.whole && v != std::floor(v))) {
    throw SettingsError(k.name + " must be " + (k.whole ? "a whole number " : "a number ") + range + ", got '" + text + "'");
  }
  if (v < k.lo || v > k.hi) throw SettingsError(k.name + " must be " + range + ", got " + text);
  return v;
}

void apply(Settings& s, const Key& k, const std::string& text) {
  if (k.choices.empty()) {
    k.set(s, text, read_number(k, text));
    return;
  }
  for (const std::string& c : k.choices) {
    if (c == text) return k.set(s, text, 0);
  }
  throw SettingsError(k.name + " '" + text + "' is not one of " + listed(k.choices));
}

// The config's field names as the page's keys, for RunConfig::validate's messages.
std::string key_of(const std::string& field) {
  if (field == "batch_size") return "batch";
  if (field == "init_scale") return "init";
  if (field == "validation_fraction") return "validation";
  if (field == "weight_decay") return "wd";
  if (field == "hidden") return "width";
  return field;
}

// What the keys leave to be derived: the hidden sizes, the optimizer, the steps.
void finish(Settings& s) {
  ag::RunConfig& c = s.config;
  c.hidden.assign(static_cast<std::size_t>(s.depth), static_cast<arma::uword>(s.width));
  c.optimizer = s.optimizer == "adam" ? ag::OptimizerKind::Adam : s.optimizer == "adamw" ? ag::OptimizerKind::AdamW : ag::OptimizerKind::SGD;
  c.momentum = s.optimizer == "momentum" ? 0.9 : 0.0;
  c.steps = s.target > 0 ? s.target : kMaxSteps;
  c.epochs = 1;   // --steps decides
  c.threads = 1;  // the browser has one; any number gives the same bits
  try {
    c.validate(key_of);
  } catch (const ag::ConfigError& e) {
    throw SettingsError(e.what());
  }
}

}  // namespace

std::string shortest(double v) {
  char buf[40];
  if (v == std::floor(v) && std::abs(v) < 1e15) {  // a whole number as one: 2000, not 2e+03
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

Settings default_settings() {
  Settings s;
  s.config = ag::mlp_config();
  for (const Key& k : keys()) apply(s, k, k.fallback);
  finish(s);
  return s;
}

Settings parse_settings(const std::string& hash) {
  Settings s = default_settings();
  std::string text = hash.empty() || hash[0] != '#' ? hash : hash.substr(1);
  std::size_t at = 0;
  while (at <= text.size() && !text.empty()) {
    const std::size_t amp = std::min(text.find('&', at), text.size());
    const std::string pair = text.substr(at, amp - at);
    at = amp + 1;
    if (pair.empty()) continue;
    const std::size_t eq = pair.find('=');
    const std::string name = explorer::url_decode(pair.substr(0, eq));
    const Key* k = find_key(name);
    if (!k) {
      std::vector<std::string> names;
      for (const Key& key : keys()) names.push_back(key.name);
      throw SettingsError("unknown setting '" + name + "' (the settings are " + listed(names) + ")");
    }
    if (eq == std::string::npos) throw SettingsError(name + " needs a value (" + name + "=...)");
    apply(s, *k, explorer::url_decode(pair.substr(eq + 1)));
  }
  finish(s);
  return s;
}

std::string command_line(const Settings& s, long long steps) {
  const ag::RunConfig& c = s.config;
  std::string hidden;
  for (arma::uword h : c.hidden) hidden += (hidden.empty() ? "" : ",") + std::to_string(h);
  const bool sgd = c.optimizer == ag::OptimizerKind::SGD;
  return "autograd train --dataset " + c.dataset + " --points " + std::to_string(*c.generated.points) + " --noise " +
         shortest(*c.generated.noise) + " --validation " + shortest(c.validation_fraction) + " --hidden " +
         (hidden.empty() ? "\"\"" : hidden) + " --activation " + ag::activation_name(c.activation) + " --norm " +
         ag::norm_name(c.norm) + " --impl " + ag::impl_name(c.impl) + " --norm-placement " + ag::placement_name(c.placement) +
         " --optimizer " + ag::optimizer_name(c.optimizer) +
         (sgd ? " --momentum " + shortest(c.momentum) : "") + " --lr " + shortest(c.lr) + " --weight-decay " +
         shortest(c.weight_decay) + " --batch-size " + std::to_string(c.batch_size) + " --init-scale " +
         shortest(c.init_scale) + " --seed " + std::to_string(c.seed) + " --steps " + std::to_string(steps);
}

std::string settings_json() {
  std::string out = "[";
  for (const Key& k : keys()) {
    explorer::Object o;
    o.text("key", k.name).text("default", k.fallback).text("help", k.help);
    if (k.choices.empty()) {
      o.num("min", k.lo).num("max", k.hi).raw("whole", k.whole ? "true" : "false").raw("log", k.log ? "true" : "false");
    } else {
      std::string list = "[";
      for (const std::string& c : k.choices) list += (list.size() > 1 ? "," : "") + explorer::quoted(c);
      o.raw("choices", list + "]");
    }
    out += (out.size() > 1 ? "," : "") + o.str();
  }
  return out + "]";
}

}  // namespace playground
