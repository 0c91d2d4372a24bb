// Character-level text, makemore-style: one sequence per line, each line
// framed by a boundary token (".emma." in makemore), a seeded split by line,
// and the count-based bigram baseline a language model has to beat.
//
// Token 0 is the boundary; token k >= 1 is the k-th character of the
// vocabulary (sorted). A line of L characters is the token sequence
// 0 c1 .. cL 0 and gives L + 1 predictions: c1 from the boundary, ..., the
// closing boundary from cL. The bigram baseline and the GPT are both scored on
// exactly these targets (make_sequences), in nats per character.
#pragma once

#include <armadillo>

#include <cstdint>
#include <string>
#include <vector>

#include "autograd/rng.h"

namespace ag {

// A token id. Two bytes: kMaxVocabulary + 1 tokens fit, so a line of text
// costs 2 bytes a character (docs/files.md counts the whole of a run's data).
using Token = std::uint16_t;
using TokenLine = std::vector<Token>;

constexpr arma::uword kBoundary = 0;
constexpr std::size_t kMaxLineChars = 10000;   // longer lines are refused: "one sequence per line"
constexpr std::size_t kMaxVocabulary = 1000;   // distinct characters a text file may use
constexpr const char* kWordsPath = "/usr/share/dict/words";  // Debian's wamerican package

struct Vocabulary {
  std::vector<std::string> chars;  // UTF-8 characters, sorted; token k is chars[k - 1]
  arma::uword size() const { return chars.size() + 1; }  // with the boundary
  std::string decode(const std::vector<arma::uword>& tokens) const;  // the boundary prints nothing
  std::string decode(const TokenLine& tokens) const;
};

struct TextData {
  std::string name;
  Vocabulary vocab;
  std::vector<TokenLine> lines;  // tokens 1.., without the boundaries
  std::size_t longest() const;                  // characters in the longest line
};

// "words" or anything ending in .txt.
bool is_text_dataset(const std::string& name);

// The word list: lines made only of the letters a-z are kept, in the file's
// order, each once; possessives ('s), capitalised names and accented words
// are dropped (63,875 of wamerican's 104,334 lines are kept). A missing file
// throws DataError naming the package to install.
TextData load_words(const std::string& path = kWordsPath);

// Any UTF-8 text, one sequence per line (\n or \r\n; the last line needs no
// newline; empty lines are skipped). Throws DataError naming the file and the
// line for anything but a regular file, an empty file, binary data (a NUL, a
// control character, bytes that are not strict UTF-8: data/utf8.h), a line over
// kMaxLineChars characters or more than kMaxVocabulary distinct characters.
// Read in two passes over the file's bytes (check and count, then tokenize):
// no string per character is ever made.
TextData load_text_file(const std::string& path);

// "words" -> load_words(), FILE.txt -> load_text_file(FILE.txt).
TextData load_text_dataset(const std::string& name);

struct TextSplit {
  std::vector<TokenLine> train, validation;
};
// Shuffles the lines and holds out round(fraction * lines) of them (at least
// one each side when there are two or more lines).
TextSplit split_lines(const TextData& data, double validation_fraction, Rng& rng);

// One training example: n + 1 framed tokens that make n predictions, input(i)
// scored on target(i) = input(i + 1). Stored as Tokens, not as two arma::uvec
// (which take about 350 bytes however short the line).
struct Sequence {
  TokenLine tokens;
  std::size_t size() const { return tokens.empty() ? 0 : tokens.size() - 1; }  // predictions
  arma::uword input(std::size_t i) const { return tokens[i]; }
  arma::uword target(std::size_t i) const { return tokens[i + 1]; }
};
// Every line framed by boundaries and cut into pieces of at most `context`
// predictions; each target of every line appears exactly once.
std::vector<Sequence> make_sequences(const std::vector<TokenLine>& lines, arma::uword context);
std::vector<Sequence> make_sequences(const std::vector<std::vector<arma::uword>>& lines, arma::uword context);
std::size_t count_targets(const std::vector<Sequence>& sequences);

// A batch for the GPT: the tokens of sequences[rows] one after another, their
// targets, and each sequence's length (attention runs per sequence).
struct SequenceBatch {
  arma::uvec input, target;
  std::vector<arma::uword> lengths;
};
SequenceBatch gather_sequences(const std::vector<Sequence>& sequences, const arma::uvec& rows);
// rows first, first + 1, ..., first + count - 1, wrapping round the end.
SequenceBatch gather_sequences(const std::vector<Sequence>& sequences, std::size_t first, std::size_t count);

// Count bigram with add-one smoothing: P(b | a) = (n(a, b) + 1) / (n(a) + V).
struct Bigram {
  arma::mat log_prob;  // V x V: row a, column b
  // Mean -log P(target | previous token) over every target of `sequences`.
  double loss(const std::vector<Sequence>& sequences) const;
};
Bigram fit_bigram(const std::vector<Sequence>& train, arma::uword vocab_size);

}  // namespace ag
