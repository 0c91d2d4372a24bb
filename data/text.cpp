#include "data/text.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <unordered_set>

#include "autograd/tape.h"
#include "data/csv.h"

namespace ag {

namespace {

constexpr std::uintmax_t kMaxFileBytes = std::uintmax_t(256) << 20;  // 256 MiB of text: far above a lesson's

std::string read_whole(const std::string& path, const std::string& missing_hint) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw DataError(path + ": is a directory, not a text file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError(path + ": cannot open (" + std::strerror(errno) + ")" + missing_hint);
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec && size > kMaxFileBytes) {
    throw DataError(path + ": " + std::to_string(size) + " bytes; text datasets are limited to 256 MiB");
  }
  std::string bytes;
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    bytes.append(buffer, static_cast<std::size_t>(in.gcount()));
    if (bytes.size() > kMaxFileBytes) throw DataError(path + ": more than 256 MiB; text datasets are limited to that");
  }
  return bytes;
}

// The byte length of the UTF-8 character at s[i], or 0 when the bytes there are not UTF-8.
std::size_t utf8_length(const std::string& s, std::size_t i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  const std::size_t n = c < 0x80 ? 1 : (c >= 0xC2 && c <= 0xDF) ? 2 : (c >= 0xE0 && c <= 0xEF) ? 3
                        : (c >= 0xF0 && c <= 0xF4) ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
  }
  return n;
}

std::string hex_byte(unsigned char c) {
  const char* digits = "0123456789abcdef";
  return std::string("0x") + digits[c >> 4] + digits[c & 15];
}

// A line cut into UTF-8 characters; throws naming the line and column of a byte that is not text.
std::vector<std::string> characters(const std::string& path, const std::string& line, std::size_t number) {
  std::vector<std::string> chars;
  for (std::size_t i = 0; i < line.size();) {
    const unsigned char c = static_cast<unsigned char>(line[i]);
    const std::size_t n = utf8_length(line, i);
    if (n == 0 || (c < 0x20 && c != '\t') || c == 0x7f) {
      throw DataError(path + ": line " + std::to_string(number) + ", character " + std::to_string(chars.size() + 1) +
                      ": byte " + hex_byte(c) + " is not UTF-8 text (a binary file?); expected one sequence of text per line");
    }
    chars.push_back(line.substr(i, n));
    i += n;
    if (chars.size() > kMaxLineChars) {
      throw DataError(path + ": line " + std::to_string(number) + " is longer than " + std::to_string(kMaxLineChars) +
                      " characters; expected one sequence (a word, a name, a sentence) per line");
    }
  }
  return chars;
}

// Token ids from characters: the sorted distinct characters are tokens 1, 2, ...
TextData tokenize(const std::string& name, const std::vector<std::vector<std::string>>& lines) {
  std::set<std::string> distinct;
  for (const auto& line : lines) distinct.insert(line.begin(), line.end());
  TextData data;
  data.name = name;
  data.vocab.chars.assign(distinct.begin(), distinct.end());
  std::map<std::string, arma::uword> id;
  for (std::size_t k = 0; k < data.vocab.chars.size(); ++k) id[data.vocab.chars[k]] = k + 1;
  for (const auto& line : lines) {
    std::vector<arma::uword> tokens;
    for (const std::string& c : line) tokens.push_back(id[c]);
    data.lines.push_back(std::move(tokens));
  }
  return data;
}

}  // namespace

std::string Vocabulary::decode(const std::vector<arma::uword>& tokens) const {
  std::string text;
  for (arma::uword t : tokens) {
    if (t == kBoundary) continue;
    if (t > chars.size()) throw Error("Vocabulary::decode: token " + std::to_string(t) + " is past the vocabulary of " +
                                      std::to_string(size()));
    text += chars[t - 1];
  }
  return text;
}

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
  const std::string bytes = read_whole(path, "");
  std::vector<std::vector<std::string>> lines;
  std::unordered_set<std::string> seen;
  std::size_t start = 0;
  while (start < bytes.size()) {
    const std::size_t end = std::min(bytes.find('\n', start), bytes.size());
    const std::string word = bytes.substr(start, end - start);
    start = end + 1;
    const bool letters = !word.empty() && word.size() <= kMaxLineChars &&
                         std::all_of(word.begin(), word.end(), [](char c) { return c >= 'a' && c <= 'z'; });
    if (!letters || !seen.insert(word).second) continue;
    lines.emplace_back();
    for (char c : word) lines.back().push_back(std::string(1, c));
  }
  if (lines.empty()) throw DataError(path + ": no line made only of the letters a-z (is it a word list?)");
  return tokenize("words", lines);
}

TextData load_text_file(const std::string& path) {
  const std::string bytes = read_whole(path, "");
  if (bytes.empty()) throw DataError(path + ": the file is empty; expected text, one sequence per line");
  std::vector<std::vector<std::string>> lines;
  std::size_t start = 0, number = 0;
  while (start < bytes.size()) {
    const std::size_t end = std::min(bytes.find('\n', start), bytes.size());
    std::string line = bytes.substr(start, end - start);
    start = end + 1;
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();  // Windows line ends
    if (line.empty()) continue;
    lines.push_back(characters(path, line, number));
  }
  if (lines.empty()) throw DataError(path + ": only empty lines; expected text, one sequence per line");
  TextData data = tokenize(path, lines);
  if (data.vocab.chars.size() > kMaxVocabulary) {
    throw DataError(path + ": " + std::to_string(data.vocab.chars.size()) + " distinct characters; at most " +
                    std::to_string(kMaxVocabulary) + " (a character-level model needs a small alphabet)");
  }
  return data;
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

std::vector<Sequence> make_sequences(const std::vector<std::vector<arma::uword>>& lines, arma::uword context) {
  if (context == 0) throw Error("make_sequences: the context must be at least 1 token");
  std::vector<Sequence> out;
  for (const std::vector<arma::uword>& line : lines) {
    // framed: 0 c1 .. cL 0; prediction i reads framed[i] and is scored on framed[i + 1].
    std::vector<arma::uword> framed{kBoundary};
    framed.insert(framed.end(), line.begin(), line.end());
    framed.push_back(kBoundary);
    const arma::uword predictions = framed.size() - 1;
    for (arma::uword first = 0; first < predictions; first += context) {
      const arma::uword n = std::min(context, predictions - first);
      Sequence s{arma::uvec(n), arma::uvec(n)};
      for (arma::uword i = 0; i < n; ++i) {
        s.input(i) = framed[first + i];
        s.target(i) = framed[first + i + 1];
      }
      out.push_back(std::move(s));
    }
  }
  return out;
}

std::size_t count_targets(const std::vector<Sequence>& sequences) {
  std::size_t n = 0;
  for (const Sequence& s : sequences) n += s.target.n_elem;
  return n;
}

Bigram fit_bigram(const std::vector<Sequence>& train, arma::uword vocab_size) {
  arma::mat counts(vocab_size, vocab_size, arma::fill::ones);  // add-one smoothing
  for (const Sequence& s : train) {
    for (arma::uword i = 0; i < s.input.n_elem; ++i) counts(s.input(i), s.target(i)) += 1;
  }
  Bigram model;
  model.log_prob = arma::log(counts.each_col() / arma::sum(counts, 1));
  return model;
}

double Bigram::loss(const std::vector<Sequence>& sequences) const {
  double total = 0;
  std::size_t n = 0;
  for (const Sequence& s : sequences) {
    for (arma::uword i = 0; i < s.input.n_elem; ++i) {
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
    n += sequences[r].input.n_elem;
  }
  b.input.set_size(n);
  b.target.set_size(n);
  std::size_t at = 0;
  for (arma::uword r : rows) {
    const Sequence& s = sequences[r];
    if (s.input.n_elem == 0) continue;
    b.input.subvec(at, at + s.input.n_elem - 1) = s.input;
    b.target.subvec(at, at + s.input.n_elem - 1) = s.target;
    b.lengths.push_back(s.input.n_elem);
    at += s.input.n_elem;
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
