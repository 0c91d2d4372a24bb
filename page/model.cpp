// The norms inside a trained model: the small GPT of page/model/ (trained by
// `autograd train --model gpt`, docs/live-page.md has the command) reads a word
// the student types; the page shows each LayerNorm's input statistics, γ, β,
// the next-character distribution and, with sample=SEED, a seeded continuation.
//
//   sample=1&word=em      (word last: it is the rest of the hash, '&' and '=' included)
#include <cmath>
#include <memory>
#include <string>

#include "nn/gpt.h"
#include "ops/ops.h"
#include "ops/softmax.h"
#include "page/views.h"
#include "train/model_description.h"

#ifndef PAGE_MODEL_PATH
#error "PAGE_MODEL_PATH: the checkpoint the page reads (page/CMakeLists.txt sets it)"
#endif

namespace page {

namespace {

struct Loaded {
  ag::ModelDescription run;
  std::unique_ptr<ag::Gpt> model;
};

// Loaded once. The fused implementation: each LayerNorm is then one tape node
// whose inputs are x, γ and β (the same function as composed, to rounding).
Loaded& loaded() {
  static Loaded m = [] {
    Loaded l;
    const ag::Checkpoint ckpt = ag::read_checkpoint(PAGE_MODEL_PATH);
    l.run = ag::read_description(ckpt, PAGE_MODEL_PATH, ag::ModelKind::Gpt);
    l.run.gpt.block.impl = ag::Impl::Fused;
    ag::Rng init_rng(0);  // the weights come from the file
    l.model = std::make_unique<ag::Gpt>(l.run.gpt, init_rng);
    ag::load_checkpoint(PAGE_MODEL_PATH, l.model->parameters());
    l.model->eval();
    return l;
  }();
  return m;
}

struct ModelRequest {
  std::string word;
  bool sample = false;
  std::uint64_t seed = 0;
};

ModelRequest parse_model_request(const std::string& hash) {
  ModelRequest r;
  std::string rest = hash;
  while (!rest.empty()) {
    if (rest.rfind("word=", 0) == 0) {
      r.word = rest.substr(5);
      break;
    }
    const auto amp = rest.find('&');
    const std::string pair = rest.substr(0, amp);
    rest = amp == std::string::npos ? "" : rest.substr(amp + 1);
    const auto eq = pair.find('=');
    const std::string key = pair.substr(0, eq), value = eq == std::string::npos ? "" : pair.substr(eq + 1);
    if (key == "sample") {
      if (value.empty() || value.size() > 9 || value.find_first_not_of("0123456789") != std::string::npos)
        throw PageError("sample: the seed must be a whole number from 0 to 999999999, got '" + value + "'");
      r.sample = true;
      r.seed = std::stoull(value);
    } else if (!key.empty()) {
      throw PageError("unknown field '" + key + "' (known: word, sample)");
    }
  }
  return r;
}

// The boundary, then one token per character; every problem named.
arma::uvec tokens_of(const std::string& word, const ag::ModelDescription& run) {
  if (word.empty()) throw PageError("word: empty; type a few letters, e.g. em");
  std::vector<arma::uword> tokens{ag::kBoundary};
  for (unsigned char c : word) {
    std::size_t k = 0;
    while (k < run.vocab.chars.size() && run.vocab.chars[k] != std::string(1, static_cast<char>(c))) ++k;
    if (k == run.vocab.chars.size()) {
      std::string all;
      for (const std::string& ch : run.vocab.chars) all += ch;
      const std::string shown = c >= 0x20 && c < 0x7f ? "'" + std::string(1, static_cast<char>(c)) + "'" : "a character";
      throw PageError("word: " + shown + " is not in the model's vocabulary (" + all + ")");
    }
    tokens.push_back(k + 1);
  }
  if (tokens.size() > run.gpt.context) {
    throw PageError("word: " + std::to_string(word.size()) + " letters; the model reads at most " +
                    std::to_string(run.gpt.context - 1) + " (its context is " + std::to_string(run.gpt.context) +
                    " tokens, the first one the boundary)");
  }
  return arma::uvec(tokens);
}

// Per LayerNorm node of the tape, in order: input mean and sd per position, γ, β.
void put_norms(const ag::Tape& tape, Report& report) {
  int k = 0;
  for (std::size_t id = 0; id < tape.size(); ++id) {
    const ag::Node& n = tape.node(id);
    if (n.op != "layernorm_fused") continue;
    const std::string key = "gpt.norm" + std::to_string(k++) + ".";
    const arma::mat& x = tape.value(n.inputs[0]);
    ag::Tape t;
    ag::Var xv = t.constant(x);
    report.put(key + "mean", ag::mean(xv, 1).value().t(), "input mean per position");
    report.put(key + "sd", ag::sqrt(ag::var(xv, 1, false)).value().t(), "input standard deviation per position");
    report.put(key + "gamma", tape.value(n.inputs[1]), "γ");
    report.put(key + "beta", tape.value(n.inputs[2]), "β");
    const std::string& op = tape.node(n.inputs[1]).op;  // "param:h0.norm1.gamma"
    report.labels[key + "name"] = op.substr(op.find(':') + 1, op.rfind('.') - op.find(':') - 1);
  }
  report.put("gpt.norms", static_cast<double>(k), "LayerNorms in the model (2 x layers + 1)");
}

arma::rowvec next_distribution(ag::Gpt& model, const arma::uvec& tokens, ag::Tape& tape) {
  tape.clear();
  ag::Var logits = model.logits(tape, tokens, {tokens.n_elem});
  return ag::softmax(logits, 1).value().row(tokens.n_elem - 1);
}

// The typed word continued one drawn character at a time until the boundary
// (or the context is full): u ~ U[0, 1) from ag::Rng(seed), the first token
// whose cumulative probability exceeds u.
void put_sample(const ModelRequest& r, arma::uvec tokens, Loaded& m, Report& report) {
  ag::Rng rng(r.seed);
  ag::Tape tape;
  std::string text = r.word;
  std::vector<double> drawn;
  while (tokens.n_elem < m.run.gpt.context) {
    const arma::rowvec p = next_distribution(*m.model, tokens, tape);
    const double u = rng.uniform();
    arma::uword next = 0;
    double cumulative = p(0);
    while (next + 1 < p.n_elem && cumulative <= u) cumulative += p(++next);
    drawn.push_back(p(next));
    if (next == ag::kBoundary) break;
    text += m.run.vocab.chars[next - 1];
    tokens.resize(tokens.n_elem + 1);
    tokens(tokens.n_elem - 1) = next;
  }
  report.labels["gpt.sample"] = text;
  report.put("gpt.sample_p", arma::rowvec(drawn), "the probability of each drawn character (the last: the end)");
}

}  // namespace

std::string compute_model(const std::string& hash) {
  Report report;
  try {
    const ModelRequest r = parse_model_request(hash);
    Loaded& m = loaded();
    const arma::uvec tokens = tokens_of(r.word, m.run);
    ag::Tape tape;
    const arma::rowvec p = next_distribution(*m.model, tokens, tape);
    put_norms(tape, report);
    report.put("gpt.next", p, "P(next character | the word so far)");
    std::string chars = ".";  // the boundary: the word ends here
    for (const std::string& ch : m.run.vocab.chars) chars += ch;
    report.labels["gpt.vocab"] = chars;
    report.labels["gpt.model"] = m.model->describe();
    if (r.sample) put_sample(r, tokens, m, report);
  } catch (const std::exception& e) {
    report = Report();
    report.error = e.what();
  }
  return report.json();
}

}  // namespace page
