// The live page's inputs, as its URL hash writes them, parsed and checked.
//
//   x=3,1,5,7&gamma=2&beta=1&eps=1e-5         one vector (seed 003)
//   rows=1.133,-0.299,0.503;-0.176,0.911,0.143  a batch, one sample per row (seed 000)
//   dy=1,2,3,4        the upstream gradient of row 1 (default: L = sum_j j * y_j)
//   steps=10          BatchNorm training steps before eval (running statistics)
//
// Numbers are read by the CLI's own grammar (ag::parse_matrix, data/csv.h):
// decimal, separated by commas and/or spaces, rows by ';'. gamma and beta take
// one value (every feature) or one per feature. Every problem is a PageError
// (or the grammar's DataError) whose one-line message names the field.
#pragma once

#include <armadillo>

#include <stdexcept>
#include <string>

namespace page {

// The page's limits (docs/live-page.md, "Limits"): past them a message, never a frozen tab.
constexpr std::size_t kMaxNumbers = 100000;          // numbers in x (rows x features)
constexpr arma::uword kMaxFeatures = 4096;           // features in a row
constexpr arma::uword kShownRows = 10;               // rows of each N x D result sent and drawn, at most,
constexpr arma::uword kShownNumbers = 4096;          // and numbers of each (a row at least): d = 4096 sends 1 row
constexpr arma::uword kMaxFiniteDifferences = 1024;  // features of row 1 differenced: 2 d forwards of d each

// The page's fields as its URL hash names them, each with what an empty field
// means: the one list. Report::json sends it ("fields"), and the page's
// JavaScript fills its form and writes its links from it. dy's default is
// computed (1, 2, ..., D), so its text is empty. `word` is the model part's
// (page/model.cpp reads it from its own request); the LayerNorm part takes it
// and leaves it, so that one link holds the whole page.
struct Field {
  const char* name;
  const char* empty_means;
};
inline constexpr Field kFields[] = {{"x", ""},  {"rows", ""},   {"gamma", "1"},  {"beta", "0"},
                                    {"eps", "1e-5"}, {"dy", ""}, {"steps", "10"}, {"word", "em"}};

struct PageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Request {
  arma::mat x;                 // N x D
  arma::mat gamma, beta;       // 1 x D
  double eps = 0;              // kFields' default unless given
  arma::mat dy;                // 1 x D, for row 1
  bool dy_default = true;      // dy = 1, 2, ..., D
  int steps = 0;               // BatchNorm training steps before eval mode
};

Request parse_request(const std::string& hash);

}  // namespace page
