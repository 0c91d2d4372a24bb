#include "train/model_description.h"

#include <map>
#include <sstream>

#include "autograd/error.h"
#include "autograd/format.h"
#include "data/utf8.h"

namespace ag {

namespace {

constexpr const char* kMlpFormat = "autograd-mlp";
constexpr const char* kGptFormat = "autograd-gpt";


std::string to_hex(const std::string& bytes) {
  const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

std::map<std::string, std::string> fields_of(const std::string& text) {
  std::map<std::string, std::string> fields;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const std::size_t eq = line.find('=');
    if (eq != std::string::npos) fields[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return fields;
}

// A whole number from 1 to `most`, all of the text.
arma::uword count_field(std::map<std::string, std::string>& f, const std::string& key, arma::uword most) {
  const std::string& text = f[key];
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos ||
      std::stoul(text) < 1 || std::stoul(text) > most) {
    throw Error(key + " '" + text + "' is not a whole number from 1 to " + std::to_string(most));
  }
  return std::stoul(text);
}

double number_field(std::map<std::string, std::string>& f, const std::string& key, double lo, double hi) {
  const std::string& text = f[key];
  std::size_t used = 0;
  double v = lo - 1;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !(v >= lo && v < hi)) {
    std::ostringstream range;
    range << "[" << lo << ", " << hi << ")";
    throw Error(key + " '" + text + "' is not a number in " + range.str());
  }
  return v;
}

// The vocabulary's characters from the hex of their UTF-8 bytes, each checked
// as a text file's are (data/utf8.h: no newline, ESC or other control, no
// malformed UTF-8) and in the order a text file's vocabulary has: sorted, each once.
Vocabulary parse_vocabulary(const std::string& hex) {
  if (hex.size() % 2 != 0 || hex.find_first_not_of("0123456789abcdef") != std::string::npos) {
    throw Error("vocabulary_hex is not hexadecimal");
  }
  std::string bytes;
  for (std::size_t i = 0; i < hex.size(); i += 2) bytes += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  Vocabulary vocab;
  for (std::size_t i = 0; i < bytes.size();) {
    char32_t code = 0;
    std::string why;
    const std::size_t n = text_character(bytes, i, code, why);
    if (n == 0) throw Error("vocabulary character " + std::to_string(vocab.chars.size() + 1) + " is not text: " + why);
    std::string c = bytes.substr(i, n);
    if (!vocab.chars.empty() && !(vocab.chars.back() < c)) {
      throw Error("vocabulary character " + std::to_string(vocab.chars.size() + 1) + " is out of order or repeated");
    }
    vocab.chars.push_back(std::move(c));
    i += n;
  }
  return vocab;
}

// Every size the description gives meets a weight record of the file, every
// block's included, before anything is built: `layers=100000` in a file that
// holds four records is refused here, not after 100,000 blocks are allocated.
// With every block's qkv (width x 3 width) in the file, a model built from the
// description is at most about 4 times the file's size.
void check_gpt_records(const ModelDescription& d, const Checkpoint& ckpt) {
  std::map<std::string, const CheckpointEntry*> records;
  for (const CheckpointEntry& e : ckpt.params) records.emplace(e.name, &e);
  const arma::uword w = d.gpt.block.width;
  auto expect = [&](const std::string& name, arma::uword rows, arma::uword cols) {
    const auto at = records.find(name);
    if (at == records.end()) throw Error("the file holds no '" + name + "'");
    const arma::mat& value = at->second->value;
    if (value.n_rows != rows || value.n_cols != cols) {
      throw Error("'" + name + "' is " + shape_str(value) + " in the file, the description makes it " + shape_str(rows, cols));
    }
  };
  expect("wte.weight", d.gpt.vocab, w);
  expect("wpe.weight", d.gpt.context, w);
  expect("head.weight", w, d.gpt.vocab);
  for (arma::uword i = 0; i < d.gpt.layers; ++i) expect("h" + std::to_string(i) + ".attn.qkv.weight", w, 3 * w);
  if (records.count("h" + std::to_string(d.gpt.layers) + ".attn.qkv.weight") != 0) {
    throw Error("the file holds more blocks than layers=" + std::to_string(d.gpt.layers));
  }
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

bool holds_running_statistics(const Checkpoint& ckpt) {
  for (const CheckpointEntry& e : ckpt.params) {
    if (e.name.size() > 13 && e.name.compare(e.name.size() - 13, 13, ".running_mean") == 0) return true;
  }
  return false;
}

void check_mlp_records(const ModelDescription& run, const Checkpoint& ckpt, const std::string& path) {
  // Layer k's weight is sizes[k-1] x sizes[k]: every size in the description meets a record,
  // so a forged "sizes=2,50000000,2" is refused here, before make_mlp allocates anything.
  const std::vector<arma::uword>& sizes = run.mlp.sizes;
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

// The MLP's fields; the sizes are checked against the records by the caller, outside "damaged (...)".
void read_mlp(std::map<std::string, std::string>& f, ModelDescription& d) {
  d.mlp.sizes = parse_sizes(f["sizes"]);
  d.mlp.norm = parse_norm(f["norm"]);
  d.mlp.impl = parse_impl(f["impl"]);
  d.mlp.activation = parse_activation(f["activation"]);
  d.mlp.init = d.mlp.activation == Activation::Tanh ? Init::Xavier : Init::Kaiming;
  d.config.hidden.assign(d.mlp.sizes.begin() + 1, d.mlp.sizes.end() - 1);
  d.config.norm = d.mlp.norm;
  d.config.impl = d.mlp.impl;
  d.config.activation = d.mlp.activation;
  // Written only for a norm after the activation: a checkpoint without it is "pre".
  if (f.count("placement")) {
    d.config.placement = parse_placement(f["placement"]);
    if (d.config.placement == Placement::None) throw Error("placement none: an MLP's norm goes pre or post");
    d.mlp.norm_after_activation = d.config.placement == Placement::Post;
  }
  d.config.label_column = f["label"];
  if (f.count("points")) d.config.generated.points = static_cast<long long>(number_field(f, "points", 4, kMaxGeneratedPoints + 1));
  if (f.count("noise")) d.config.generated.noise = number_field(f, "noise", 0, kMaxNoise + 1);
}

void read_gpt(std::map<std::string, std::string>& f, ModelDescription& d, const Checkpoint& ckpt) {
  d.gpt.vocab = count_field(f, "vocab", kMaxVocabulary + 1);
  d.vocab = parse_vocabulary(f["vocabulary_hex"]);
  if (d.vocab.size() != d.gpt.vocab) {
    throw Error("the vocabulary has " + std::to_string(d.vocab.size()) + " tokens, vocab says " + f["vocab"]);
  }
  d.gpt.context = count_field(f, "context", 1u << 20);
  d.gpt.layers = count_field(f, "layers", 1u << 20);
  d.gpt.block.heads = count_field(f, "heads", 1u << 20);
  d.gpt.block.width = count_field(f, "width", 1u << 20);
  d.gpt.block.placement = parse_placement(f["placement"]);
  d.gpt.block.norm = parse_norm(f["norm"]);
  d.gpt.block.impl = parse_impl(f["impl"]);
  d.gpt.block.dropout = number_field(f, "dropout", 0, 1);
  check_gpt_spec(d.gpt);
  check_gpt_records(d, ckpt);
  RunConfig& c = d.config;
  c.context = static_cast<long long>(d.gpt.context);
  c.layers = static_cast<long long>(d.gpt.layers);
  c.heads = static_cast<long long>(d.gpt.block.heads);
  c.width = static_cast<long long>(d.gpt.block.width);
  c.placement = d.gpt.block.placement;
  c.norm = d.gpt.block.norm == Norm::None ? Norm::LayerNorm : d.gpt.block.norm;
  c.impl = d.gpt.block.impl;
  c.dropout = d.gpt.block.dropout;
}

}  // namespace

std::string describe_model(const RunConfig& config, const MlpSpec& spec) {
  std::ostringstream out;
  out << "format=" << kMlpFormat << "\nsizes=";
  for (std::size_t i = 0; i < spec.sizes.size(); ++i) out << (i ? "," : "") << spec.sizes[i];
  out << "\nnorm=" << norm_name(spec.norm) << "\nimpl=" << impl_name(spec.impl)
      << (spec.norm_after_activation ? "\nplacement=post" : "")
      << "\nactivation=" << activation_name(spec.activation) << "\ndataset=" << config.dataset
      << "\nlabel=" << config.label_column << "\nseed=" << config.seed
      << "\nvalidation_fraction=" << config.validation_fraction << "\n";
  // A generated set's size and noise, when the run chose them: evaluation regenerates the same points.
  if (config.generated.points) out << "points=" << *config.generated.points << "\n";
  if (config.generated.noise) out << "noise=" << exact_number(*config.generated.noise) << "\n";
  return out.str();
}

std::string describe_model(const RunConfig& c, const GptSpec& spec, const Vocabulary& vocab) {
  std::string chars;
  for (const std::string& ch : vocab.chars) chars += ch;
  std::ostringstream out;
  out << "format=" << kGptFormat << "\nvocab=" << spec.vocab << "\nvocabulary_hex=" << to_hex(chars)
      << "\ncontext=" << spec.context << "\nlayers=" << spec.layers << "\nheads=" << spec.block.heads
      << "\nwidth=" << spec.block.width << "\nplacement=" << placement_name(spec.block.placement)
      << "\nnorm=" << norm_name(spec.block.norm) << "\nimpl=" << impl_name(spec.block.impl)
      << "\ndropout=" << spec.block.dropout << "\ndataset=" << c.dataset << "\nseed=" << c.seed
      << "\nvalidation_fraction=" << c.validation_fraction << "\n";
  return out.str();
}

ModelDescription read_description(const Checkpoint& ckpt, const std::string& path) {
  std::map<std::string, std::string> f = fields_of(ckpt.metadata);
  ModelDescription d;
  if (f["format"] == kGptFormat) d.kind = ModelKind::Gpt;
  else if (f["format"] != kMlpFormat) throw DataError(path + ": the checkpoint does not describe an autograd MLP or GPT");
  d.config = d.kind == ModelKind::Gpt ? gpt_config() : mlp_config();
  try {
    if (d.kind == ModelKind::Gpt) read_gpt(f, d, ckpt);
    else read_mlp(f, d);
    d.config.dataset = f["dataset"];
    d.config.seed = parse_seed(f["seed"]);
    d.config.validation_fraction = number_field(f, "validation_fraction", 0, 1);
  } catch (const std::exception& e) {
    throw DataError(path + ": the checkpoint's model description is damaged (" + e.what() + ")");
  }
  if (d.kind == ModelKind::Mlp && d.mlp.norm == Norm::BatchNorm && !holds_running_statistics(ckpt)) {
    throw DataError(path + ": an MLP with batchnorm, saved without the running statistics that evaluation normalises "
                    "with (a checkpoint from before they were saved): train it again to evaluate it");
  }
  if (d.kind == ModelKind::Mlp) check_mlp_records(d, ckpt, path);
  return d;
}

ModelDescription read_description(const Checkpoint& ckpt, const std::string& path, ModelKind expected) {
  const bool gpt = fields_of(ckpt.metadata)["format"] == kGptFormat;
  if (expected == ModelKind::Gpt && !gpt) throw DataError(path + ": not a GPT checkpoint (autograd train --model gpt writes one)");
  if (expected == ModelKind::Mlp && gpt) throw DataError(path + ": the checkpoint does not describe an autograd MLP");
  return read_description(ckpt, path);
}

}  // namespace ag
