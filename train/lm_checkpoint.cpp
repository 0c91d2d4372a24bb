#include "train/lm_checkpoint.h"

#include <map>
#include <sstream>

#include "autograd/error.h"
#include "data/utf8.h"

namespace ag {

namespace {

constexpr const char* kFormat = "format=autograd-gpt";

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
    throw Error(key + " '" + text + "' is not a number in [" + std::to_string(lo) + ", " + std::to_string(hi) + ")");
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
void check_records(const LmDescription& d, const Checkpoint& ckpt) {
  std::map<std::string, const CheckpointEntry*> records;
  for (const CheckpointEntry& e : ckpt.params) records.emplace(e.name, &e);
  const arma::uword w = d.spec.block.width;
  auto expect = [&](const std::string& name, arma::uword rows, arma::uword cols) {
    const auto at = records.find(name);
    if (at == records.end()) throw Error("the file holds no '" + name + "'");
    const arma::mat& value = at->second->value;
    if (value.n_rows != rows || value.n_cols != cols) {
      throw Error("'" + name + "' is " + shape_str(value) + " in the file, the description makes it " + shape_str(rows, cols));
    }
  };
  expect("wte.weight", d.spec.vocab, w);
  expect("wpe.weight", d.spec.context, w);
  expect("head.weight", w, d.spec.vocab);
  for (arma::uword i = 0; i < d.spec.layers; ++i) expect("h" + std::to_string(i) + ".attn.qkv.weight", w, 3 * w);
  if (records.count("h" + std::to_string(d.spec.layers) + ".attn.qkv.weight") != 0) {
    throw Error("the file holds more blocks than layers=" + std::to_string(d.spec.layers));
  }
}

}  // namespace

std::string describe_lm_run(const LmConfig& c, const GptSpec& spec, const Vocabulary& vocab) {
  std::string chars;
  for (const std::string& ch : vocab.chars) chars += ch;
  std::ostringstream out;
  out << kFormat << "\nvocab=" << spec.vocab << "\nvocabulary_hex=" << to_hex(chars) << "\ncontext=" << spec.context
      << "\nlayers=" << spec.layers << "\nheads=" << spec.block.heads << "\nwidth=" << spec.block.width
      << "\nplacement=" << placement_name(spec.block.placement) << "\nnorm=" << norm_name(spec.block.norm)
      << "\nimpl=" << impl_name(spec.block.impl) << "\ndropout=" << spec.block.dropout << "\ndataset=" << c.dataset
      << "\nseed=" << c.seed << "\nvalidation_fraction=" << c.validation_fraction << "\n";
  return out.str();
}

bool is_lm_checkpoint(const Checkpoint& ckpt) { return ckpt.metadata.rfind(std::string(kFormat) + "\n", 0) == 0; }

LmDescription read_lm_description(const Checkpoint& ckpt, const std::string& path) {
  if (!is_lm_checkpoint(ckpt)) throw DataError(path + ": not a GPT checkpoint (autograd train --model gpt writes one)");
  std::map<std::string, std::string> f = fields_of(ckpt.metadata);
  LmDescription d;
  try {
    d.spec.vocab = count_field(f, "vocab", kMaxVocabulary + 1);
    d.vocab = parse_vocabulary(f["vocabulary_hex"]);
    if (d.vocab.size() != d.spec.vocab) {
      throw Error("the vocabulary has " + std::to_string(d.vocab.size()) + " tokens, vocab says " + f["vocab"]);
    }
    d.spec.context = count_field(f, "context", 1u << 20);
    d.spec.layers = count_field(f, "layers", 1u << 20);
    d.spec.block.heads = count_field(f, "heads", 1u << 20);
    d.spec.block.width = count_field(f, "width", 1u << 20);
    d.spec.block.placement = parse_placement(f["placement"]);
    d.spec.block.norm = parse_norm(f["norm"]);
    d.spec.block.impl = parse_impl(f["impl"]);
    d.spec.block.dropout = number_field(f, "dropout", 0, 1);
    check_gpt_spec(d.spec);
    check_records(d, ckpt);
    d.config.dataset = f["dataset"];
    d.config.validation_fraction = number_field(f, "validation_fraction", 0, 1);
  } catch (const std::exception& e) {
    throw DataError(path + ": the checkpoint's model description is damaged (" + e.what() + ")");
  }
  return d;
}

}  // namespace ag
