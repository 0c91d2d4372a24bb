// The text a checkpoint carries about its model and data, so `autograd eval`
// can rebuild the same network and the same validation split.
#include <map>
#include <sstream>

#include "autograd/tape.h"
#include "autograd/error.h"
#include "train/checkpoint.h"
#include "train/trainer.h"

namespace ag {

std::string describe_run(const TrainConfig& config, const MlpSpec& spec) {
  std::ostringstream out;
  out << "format=autograd-mlp\nsizes=";
  for (std::size_t i = 0; i < spec.sizes.size(); ++i) out << (i ? "," : "") << spec.sizes[i];
  out << "\nnorm=" << norm_name(spec.norm) << "\nimpl=" << impl_name(spec.impl)
      << "\nactivation=" << activation_name(spec.activation) << "\ndataset=" << config.dataset
      << "\nlabel=" << config.label_column << "\nseed=" << config.seed
      << "\nvalidation_fraction=" << config.validation_fraction << "\n";
  return out.str();
}

namespace {

std::map<std::string, std::string> parse_lines(const std::string& text) {
  std::map<std::string, std::string> fields;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const std::size_t eq = line.find('=');
    if (eq != std::string::npos) fields[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return fields;
}

std::vector<arma::uword> parse_sizes(const std::string& text) {
  std::vector<arma::uword> sizes;
  std::istringstream in(text);
  std::string cell;
  while (std::getline(in, cell, ',')) {
    if (cell.empty() || cell.find_first_not_of("0123456789") != std::string::npos || cell.size() > 9) {
      throw Error("bad layer size '" + cell + "'");
    }
    sizes.push_back(std::stoul(cell));
    if (sizes.back() == 0) throw Error("a layer size is 0");
  }
  if (sizes.size() < 2) throw Error("fewer than 2 layer sizes");
  return sizes;
}

// The whole text must be the number: stoull reads "-1" as 2^64-1 and stod stops at "0.2junk".
std::uint64_t parse_seed(const std::string& text) {
  if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos) {
    throw Error("seed '" + text + "' is not a whole number from 0 to 9223372036854775807");
  }
  const std::uint64_t seed = std::stoull(text);
  if (seed > 9223372036854775807ULL) throw Error("seed '" + text + "' is above 9223372036854775807");
  return seed;
}

double parse_fraction(const std::string& text) {
  std::size_t used = 0;
  double v = -1;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !(v >= 0 && v < 1)) {
    throw Error("validation_fraction '" + text + "' is not a number in [0, 1)");
  }
  return v;
}

}  // namespace

void check_description_against_records(const RunDescription& run, const Checkpoint& ckpt, const std::string& path) {
  // Layer k's weight is sizes[k-1] x sizes[k]: every size in the description meets a record,
  // so a forged "sizes=2,50000000,2" is refused here, before make_mlp allocates anything.
  const std::vector<arma::uword>& sizes = run.spec.sizes;
  for (std::size_t k = 1; k < sizes.size(); ++k) {
    const std::string name = "fc" + std::to_string(k) + ".weight";
    const CheckpointEntry* found = nullptr;
    for (const CheckpointEntry& e : ckpt.params) {
      if (e.name == name) found = &e;
    }
    const std::string claimed = std::to_string(sizes[k - 1]) + "x" + std::to_string(sizes[k]);
    if (found == nullptr) {
      throw DataError(path + ": the model description says sizes=" + std::to_string(sizes[k - 1]) + "," +
                      std::to_string(sizes[k]) + " for layer " + std::to_string(k) + " but the file holds no '" +
                      name + "'");
    }
    if (found->value.n_rows != sizes[k - 1] || found->value.n_cols != sizes[k]) {
      throw DataError(path + ": the model description makes '" + name + "' " + claimed + " but the file holds " +
                      shape_str(found->value));
    }
  }
}

RunDescription parse_run_description(const std::string& text, const std::string& path) {
  std::map<std::string, std::string> f = parse_lines(text);
  if (f["format"] != "autograd-mlp") throw DataError(path + ": the checkpoint does not describe an autograd MLP");
  RunDescription d;
  try {
    d.spec.sizes = parse_sizes(f["sizes"]);
    d.spec.norm = parse_norm(f["norm"]);
    d.spec.impl = parse_impl(f["impl"]);
    d.spec.activation = parse_activation(f["activation"]);
    d.spec.init = d.spec.activation == Activation::Tanh ? Init::Xavier : Init::Kaiming;
    d.config.hidden.assign(d.spec.sizes.begin() + 1, d.spec.sizes.end() - 1);
    d.config.norm = d.spec.norm;
    d.config.impl = d.spec.impl;
    d.config.activation = d.spec.activation;
    d.config.dataset = f["dataset"];
    d.config.label_column = f["label"];
    d.config.seed = parse_seed(f["seed"]);
    d.config.validation_fraction = parse_fraction(f["validation_fraction"]);
  } catch (const std::exception& e) {
    throw DataError(path + ": the checkpoint's model description is damaged (" + e.what() + ")");
  }
  return d;
}

}  // namespace ag
