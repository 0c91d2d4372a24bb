#include "data/text.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "autograd/tape.h"
#include "autograd/error.h"
#include "data/files.h"
#include "data/utf8.h"

namespace ag {

namespace {

// 128 MiB of text: far above a lesson's, and at about 24 bytes of memory a byte of
// short lines (docs/files.md) its data stays within the 4 GiB a model may take.
constexpr std::uint64_t kMaxFileBytes = std::uint64_t(128) << 20;

// Calls visit(line, number) for each non-empty line of the bytes (without its
// \n or \r\n), numbered from 1; no list of lines is made.
template <class Visit>
void each_line(std::string_view bytes, Visit visit) {
  std::size_t start = 0, number = 0;
  while (start < bytes.size()) {
    std::size_t end = std::min(bytes.find('\n', start), bytes.size());
    const std::size_t next = end + 1;
    ++number;
    if (end > start && bytes[end - 1] == '\r') --end;  // Windows line ends
    if (end > start) visit(bytes.substr(start, end - start), number);
    start = next;
  }
}

// Calls visit(code point, its bytes) for every character of the line; throws
// naming the line, the character and the byte of anything that is not text.
template <class Visit>
void each_character(const std::string& path, std::string_view line, std::size_t number, Visit visit) {
  std::size_t count = 0;
  for (std::size_t i = 0; i < line.size();) {
    char32_t code = 0;
    std::string why;
    const std::size_t n = text_character(line, i, code, why);
    if (n == 0) {
      throw DataError(path + ": line " + std::to_string(number) + ", character " + std::to_string(count + 1) + " (byte " +
                      std::to_string(i + 1) + ") is not UTF-8 text: " + why + "; expected one sequence of text per line");
    }
    if (++count > kMaxLineChars) {
      throw DataError(path + ": line " + std::to_string(number) + " is longer than " + std::to_string(kMaxLineChars) +
                      " characters; expected one sequence (a word, a name, a sentence) per line");
    }
    visit(code, line.substr(i, n));
    i += n;
  }
}

// The sorted distinct characters (code point order is UTF-8 byte order) and each one's token.
struct Alphabet {
  std::map<char32_t, std::string> chars;
  std::unordered_map<char32_t, Token> ids;
  void number(Vocabulary& vocab) {
    for (const auto& [code, bytes] : chars) {
      vocab.chars.push_back(bytes);
      ids[code] = static_cast<Token>(vocab.chars.size());
    }
  }
};

TextData tokenize_text(const std::string& path, const std::string& bytes) {
  Alphabet alphabet;
  std::size_t lines = 0;
  each_line(bytes, [&](std::string_view line, std::size_t number) {  // pass 1: check, collect the distinct characters
    ++lines;
    each_character(path, line, number, [&](char32_t code, std::string_view c) {
      if (alphabet.chars.emplace(code, std::string(c)).second && alphabet.chars.size() > kMaxVocabulary) {
        throw DataError(path + ": more than " + std::to_string(kMaxVocabulary) + " distinct characters; at most " +
                        std::to_string(kMaxVocabulary) + " (a character-level model needs a small alphabet)");
      }
    });
  });
  if (lines == 0) throw DataError(path + ": only empty lines; expected text, one sequence per line");
  TextData data;
  data.name = path;
  alphabet.number(data.vocab);
  data.lines.reserve(lines);
  each_line(bytes, [&](std::string_view text, std::size_t number) {  // pass 2: the tokens
    TokenLine& line = data.lines.emplace_back();
    each_character(path, text, number, [&](char32_t code, std::string_view) { line.push_back(alphabet.ids.at(code)); });
    line.shrink_to_fit();
  });
  return data;
}

template <class Tokens>
std::string decode_tokens(const Vocabulary& vocab, const Tokens& tokens) {
  std::string text;
  for (const auto t : tokens) {
    if (t == kBoundary) continue;
    if (t > vocab.chars.size()) {
      throw Error("Vocabulary::decode: token " + std::to_string(t) + " is past the vocabulary of " + std::to_string(vocab.size()));
    }
    text += vocab.chars[t - 1];
  }
  return text;
}

}  // namespace

std::string Vocabulary::decode(const std::vector<arma::uword>& tokens) const { return decode_tokens(*this, tokens); }
std::string Vocabulary::decode(const TokenLine& tokens) const { return decode_tokens(*this, tokens); }

std::size_t TextData::longest() const {
  std::size_t n = 0;
  for (const auto& line : lines) n = std::max(n, line.size());
  return n;
}

bool is_text_dataset(const std::string& name) {
  return name == "words" || (name.size() > 4 && name.compare(name.size() - 4, 4, ".txt") == 0);
}

TextData load_words(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    throw DataError(path + " is missing: --dataset words needs Debian's wamerican package (apt-get install wamerican)");
  }
  const std::string bytes = read_regular_file(path, "word list", kMaxFileBytes);
  std::string kept;  // the kept words, one per line, for the text file's tokenizer
  std::unordered_set<std::string_view> seen;
  each_line(bytes, [&](std::string_view word, std::size_t) {
    const bool letters = word.size() <= kMaxLineChars &&
                         std::all_of(word.begin(), word.end(), [](char c) { return c >= 'a' && c <= 'z'; });
    if (letters && seen.insert(word).second) (kept += word) += '\n';
  });
  if (kept.empty()) throw DataError(path + ": no line made only of the letters a-z (is it a word list?)");
  TextData data = tokenize_text(path, kept);
  data.name = "words";
  return data;
}

TextData load_text_file(const std::string& path) {
  const std::string bytes = read_regular_file(path, "text", kMaxFileBytes);
  if (bytes.empty()) throw DataError(path + ": the file is empty; expected text, one sequence per line");
  return tokenize_text(path, bytes);
}

TextData load_text_dataset(const std::string& name) {
  if (name == "words") return load_words();
  if (is_text_dataset(name)) return load_text_file(name);
  throw DataError("unknown text dataset '" + name + "' (expected words or a FILE.txt)");
}

TextSplit split_lines(const TextData& data, double validation_fraction, Rng& rng) {
  if (!(validation_fraction >= 0.0 && validation_fraction < 1.0)) {
    throw Error("split_lines: the fraction must be in [0, 1), got " + std::to_string(validation_fraction));
  }
  const arma::uword n = data.lines.size();
  arma::uword n_val = static_cast<arma::uword>(std::llround(validation_fraction * static_cast<double>(n)));
  if (validation_fraction > 0 && n >= 2) n_val = std::min(std::max<arma::uword>(n_val, 1), n - 1);
  const arma::uvec order = rng.permutation(n);
  TextSplit split;
  for (arma::uword i = 0; i < n; ++i) (i < n_val ? split.validation : split.train).push_back(data.lines[order(i)]);
  return split;
}

namespace {
template <class Line>
std::vector<Sequence> cut_sequences(const std::vector<Line>& lines, arma::uword context) {
  if (context == 0) throw Error("make_sequences: the context must be at least 1 token");
  std::size_t pieces = 0;
  for (const Line& line : lines) pieces += (line.size() + context) / context;  // ceil((L + 1) / context)
  std::vector<Sequence> out;
  out.reserve(pieces);
  for (const Line& line : lines) {
    // framed: 0 c1 .. cL 0; prediction i reads framed[i] and is scored on framed[i + 1].
    const std::size_t predictions = line.size() + 1;
    auto framed = [&](std::size_t i) -> Token {
      return i == 0 || i > line.size() ? static_cast<Token>(kBoundary) : static_cast<Token>(line[i - 1]);
    };
    for (std::size_t first = 0; first < predictions; first += context) {
      const std::size_t n = std::min<std::size_t>(context, predictions - first);
      Sequence& s = out.emplace_back();
      s.tokens.resize(n + 1);
      for (std::size_t i = 0; i <= n; ++i) s.tokens[i] = framed(first + i);
    }
  }
  return out;
}
}  // namespace

std::vector<Sequence> make_sequences(const std::vector<TokenLine>& lines, arma::uword context) {
  return cut_sequences(lines, context);
}

std::vector<Sequence> make_sequences(const std::vector<std::vector<arma::uword>>& lines, arma::uword context) {
  for (const auto& line : lines) {
    for (arma::uword t : line) {
      if (t > kMaxVocabulary) throw Error("make_sequences: token " + std::to_string(t) + " is past the largest vocabulary");
    }
  }
  return cut_sequences(lines, context);
}

std::size_t count_targets(const std::vector<Sequence>& sequences) {
  std::size_t n = 0;
  for (const Sequence& s : sequences) n += s.size();
  return n;
}

Bigram fit_bigram(const std::vector<Sequence>& train, arma::uword vocab_size) {
  arma::mat counts(vocab_size, vocab_size, arma::fill::ones);  // add-one smoothing
  for (const Sequence& s : train) {
    for (std::size_t i = 0; i < s.size(); ++i) counts(s.input(i), s.target(i)) += 1;
  }
  Bigram model;
  model.log_prob = arma::log(counts.each_col() / arma::sum(counts, 1));
  return model;
}

double Bigram::loss(const std::vector<Sequence>& sequences) const {
  double total = 0;
  std::size_t n = 0;
  for (const Sequence& s : sequences) {
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (s.input(i) >= log_prob.n_rows || s.target(i) >= log_prob.n_cols) {
        throw Error("Bigram::loss: token " + std::to_string(std::max(s.input(i), s.target(i))) +
                    " is past the vocabulary of " + std::to_string(log_prob.n_rows));
      }
      total -= log_prob(s.input(i), s.target(i));
      ++n;
    }
  }
  return n == 0 ? std::nan("") : total / static_cast<double>(n);
}

SequenceBatch gather_sequences(const std::vector<Sequence>& sequences, const arma::uvec& rows) {
  SequenceBatch b;
  std::size_t n = 0;
  for (arma::uword r : rows) {
    if (r >= sequences.size()) {
      throw Error("gather_sequences: row " + std::to_string(r) + " of " + std::to_string(sequences.size()) + " sequences");
    }
    n += sequences[r].size();
  }
  b.input.set_size(n);
  b.target.set_size(n);
  std::size_t at = 0;
  for (arma::uword r : rows) {
    const Sequence& s = sequences[r];
    if (s.size() == 0) continue;
    for (std::size_t i = 0; i < s.size(); ++i) {
      b.input(at + i) = s.input(i);
      b.target(at + i) = s.target(i);
    }
    b.lengths.push_back(s.size());
    at += s.size();
  }
  return b;
}

SequenceBatch gather_sequences(const std::vector<Sequence>& sequences, std::size_t first, std::size_t count) {
  if (sequences.empty()) throw Error("gather_sequences: there are no sequences to gather");
  arma::uvec rows(count);
  for (std::size_t i = 0; i < count; ++i) rows(i) = (first + i) % sequences.size();
  return gather_sequences(sequences, rows);
}

}  // namespace ag
