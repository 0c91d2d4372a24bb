// What the page draws, as JSON: named matrices of numbers, labels and messages.
//
// {"numbers": {"ln.0": [[4]], ...}, "labels": {"ln.0": "mean", ...},
//  "errors": {"bn": "..."}, "tape": [...], "views": {"ln": ["x", ..., "ln.7"], ...},
//  "fields": [{"name": "gamma", "empty": "1"}, ...], "error": "..."}
// "fields" (request.h's kFields) is in every answer, an error's too: the page
// reads its form's fields and defaults from it.
// Numbers are printed with 17 significant digits (or handed over as doubles: json(store)) (a double read back is the
// same double), and a non-finite number is never printed: the views check
// first and report a message instead.
#pragma once

#include <armadillo>

#include <map>
#include <string>
#include <vector>

namespace page {

struct TapeRow {  // one node of the composed LayerNorm's tape, for the SVG and the walk
  std::string key, op;
  std::vector<std::size_t> inputs;
  std::string rule;  // the op's backward, as the op table declares it ("da = dy / (2 y)"); empty for a leaf
};

struct Report {
  std::map<std::string, arma::mat> numbers;
  std::map<std::string, std::string> labels;   // what a number (or view) is
  std::map<std::string, std::string> errors;   // per view: why it shows no numbers
  std::vector<TapeRow> tape;
  std::map<std::string, std::vector<std::string>> views;  // a forward view's numbers, in the order drawn
  std::string error;                           // the inputs themselves are wrong

  void put(const std::string& key, const arma::mat& value, const std::string& label = "");
  void put(const std::string& key, double value, const std::string& label = "");
  // With `store`, every matrix goes into *store as doubles (row after row) and the
  // JSON holds {"at": its first index, "rows": r, "cols": c} in its place: the
  // WebAssembly page reads the doubles from its memory, where printing 35,000
  // numbers with 17 digits and parsing them back took most of a keystroke at d = 768.
  std::string json(std::vector<double>* store = nullptr) const;
};

}  // namespace page
