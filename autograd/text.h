// Text for programs and messages, written once: a JSON string literal (the
// page's, the explorer's and the training page's reports, the rendered lessons'
// JSON, the grader's platform files) and the edit distance behind every
// "did you mean".
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace ag {

// `text` as a JSON string, quotes included: `"` and `\` escaped, newline and
// tab as \n and \t, every other C0 control and DEL as \u00XX; other bytes
// (UTF-8) pass as they are.
std::string json_string(const std::string& text);

// The number of single-character insertions, deletions and substitutions
// from a to b (Levenshtein).
std::size_t edit_distance(const std::string& a, const std::string& b);

// The parts with `separator` between them ("a, b, c").
std::string join(const std::vector<std::string>& parts, const std::string& separator);

// " (did you mean NAME?)" for the first of `known` nearest to `word`, when it is
// at most `edits` away; else "". An error message appends it after the word.
std::string did_you_mean(const std::string& word, const std::vector<std::string>& known, std::size_t edits = 2);

}  // namespace ag
