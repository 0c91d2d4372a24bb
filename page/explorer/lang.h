// The tape explorer's language (docs/explorer.md): a few statements that the
// explorer records on a tape.
//
//   x = [3, 1, 5, 7]; g = 2; y = layernorm(x) * g + 1; L = sum(y * [1, 2, 3, 4])
//
// A statement binds a name to an expression; statements are separated by ';'
// or a new line. Expressions: numbers (the CLI's grammar, ag::parse_number),
// matrices [1, 2] (one row) and [[1, 2], [3, 4]] (rows), names, calls of the
// op table's ops by their names with named constants (mean(a, dim=1),
// add_scalar(a, c=2)), the element-wise + - * / (broadcasting as the ops do),
// @ (matmul), ^ NUMBER (pow_scalar) and unary minus. Every problem is a
// ProgramError whose message starts with its 1-based column.
#pragma once

#include <armadillo>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace explorer {

// The language's limits: past them a message, never a frozen tab.
constexpr std::size_t kMaxProgramChars = 20000;
constexpr std::size_t kMaxLiteralNumbers = 100000;

struct ProgramError : std::runtime_error {
  ProgramError(std::size_t column, const std::string& what);
  std::size_t column;
};

struct NamedArg {
  std::string name;
  double value = 0;
  std::size_t column = 0;
};

struct Expr {
  enum class Kind { Number, Matrix, Name, Call, Binary, Neg };
  Kind kind = Kind::Number;
  std::size_t column = 0;
  arma::mat literal;           // Number (1x1) and Matrix
  std::string name;            // Name, Call (the op as written), Binary ("+", "-", "*", "/", "@", "^")
  std::vector<Expr> args;      // Call's positional arguments; Binary's and Neg's operands
  std::vector<NamedArg> named; // Call's constants: dim=1, eps=1e-5
  bool is_literal() const;     // a number or matrix, possibly negated: what a leaf is bound to
  arma::mat literal_value() const;
};

struct Statement {
  std::string name;
  std::size_t column = 0;
  Expr expr;
};

// The statements of `text`; a ProgramError at the first problem.
std::vector<Statement> parse_program(const std::string& text);

}  // namespace explorer
