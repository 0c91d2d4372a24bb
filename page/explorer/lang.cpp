#include "page/explorer/lang.h"

#include <cctype>

#include "data/csv.h"

namespace explorer {

ProgramError::ProgramError(std::size_t col, const std::string& what)
    : std::runtime_error("at column " + std::to_string(col) + ": " + what), column(col) {}

bool Expr::is_literal() const {
  if (kind == Kind::Neg) return args[0].is_literal();
  return kind == Kind::Number || kind == Kind::Matrix;
}

arma::mat Expr::literal_value() const { return kind == Kind::Neg ? arma::mat(-args[0].literal_value()) : literal; }

namespace {

struct Token {
  enum class Kind { Number, Name, Punct, End };
  Kind kind = Kind::End;
  std::string text;
  std::size_t column = 0;
};

bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// A number is read as the CLI reads one: its token is what could belong to a
// decimal (digits, '.', an exponent), checked by ag::parse_number.
std::size_t number_end(const std::string& s, std::size_t i) {
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    std::size_t j = i + 1;
    if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
    if (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) {
      i = j;
      while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    }
  }
  return i;
}

std::vector<Token> tokens_of(const std::string& s) {
  std::vector<Token> out;
  std::size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    const std::size_t col = i + 1;
    if (c == '\n') {
      out.push_back({Token::Kind::Punct, ";", col});
      ++i;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (std::isdigit(static_cast<unsigned char>(c)) || (c == '.' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
      const std::size_t end = number_end(s, i);
      out.push_back({Token::Kind::Number, s.substr(i, end - i), col});
      i = end;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t end = i;
      while (end < s.size() && name_char(s[end])) ++end;
      out.push_back({Token::Kind::Name, s.substr(i, end - i), col});
      i = end;
    } else if (std::string("=;()[],+-*/@^").find(c) != std::string::npos) {
      out.push_back({Token::Kind::Punct, std::string(1, c), col});
      ++i;
    } else {
      throw ProgramError(col, std::string("syntax error: unexpected character '") + c + "'");
    }
  }
  out.push_back({Token::Kind::End, "", s.size() + 1});
  return out;
}

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : t_(std::move(tokens)) {}

  std::vector<Statement> program() {
    std::vector<Statement> out;
    while (!at_end()) {
      if (accept(";")) continue;
      out.push_back(statement());
      if (!at_end() && !accept(";")) fail("expected ';' or a new line after the statement");
    }
    if (out.empty()) throw ProgramError(1, "the program is empty: write a statement such as x = [3, 1, 5, 7]; L = sum(x * x)");
    return out;
  }

 private:
  const Token& peek() const { return t_[k_]; }
  bool at_end() const { return peek().kind == Token::Kind::End; }
  bool is(const char* p) const { return peek().kind == Token::Kind::Punct && peek().text == p; }
  bool accept(const char* p) {
    if (!is(p)) return false;
    ++k_;
    return true;
  }
  std::string shown() const { return at_end() ? "the end" : "'" + peek().text + "'"; }
  [[noreturn]] void fail(const std::string& what) const {
    throw ProgramError(peek().column, "syntax error: " + what + ", found " + shown());
  }
  void expect(const char* p, const std::string& what) {
    if (!accept(p)) fail("expected '" + std::string(p) + "' " + what);
  }

  Statement statement() {
    if (peek().kind != Token::Kind::Name) fail("expected a name to assign (as in y = ...)");
    Statement s{peek().text, peek().column, {}};
    ++k_;
    expect("=", "after the name " + s.name);
    s.expr = sum();
    return s;
  }

  Expr binary(std::string op, std::size_t col, Expr a, Expr b) {
    Expr e;
    e.kind = Expr::Kind::Binary;
    e.name = std::move(op);
    e.column = col;
    e.args = {std::move(a), std::move(b)};
    return e;
  }

  Expr sum() {
    Expr e = product();
    while (is("+") || is("-")) {
      const Token op = t_[k_++];
      e = binary(op.text, op.column, std::move(e), product());
    }
    return e;
  }

  Expr product() {
    Expr e = unary();
    while (is("*") || is("/") || is("@")) {
      const Token op = t_[k_++];
      e = binary(op.text, op.column, std::move(e), unary());
    }
    return e;
  }

  Expr unary() {
    if (is("-")) {
      Expr e;
      e.kind = Expr::Kind::Neg;
      e.column = peek().column;
      ++k_;
      e.args = {unary()};
      return e;
    }
    Expr e = primary();
    if (is("^")) {
      const Token op = t_[k_++];
      Expr p = unary();
      if (!p.is_literal() || p.literal_value().n_elem != 1) throw ProgramError(op.column, "syntax error: ^ takes a number as its power (a^2)");
      e = binary("^", op.column, std::move(e), std::move(p));
    }
    return e;
  }

  Expr number() {
    Expr e;
    e.column = peek().column;
    e.literal = arma::mat(1, 1, arma::fill::value(
        ag::parse_number(peek().text, "the number at column " + std::to_string(peek().column))));
    ++k_;
    return e;
  }

  Expr primary() {
    if (peek().kind == Token::Kind::Number) return number();
    if (is("[")) return matrix();
    if (accept("(")) {
      Expr e = sum();
      expect(")", "to close the parenthesis");
      return e;
    }
    if (peek().kind != Token::Kind::Name) fail("expected a number, a name, a call or [");
    Expr e;
    e.kind = Expr::Kind::Name;
    e.name = peek().text;
    e.column = peek().column;
    ++k_;
    if (accept("(")) call(e);
    return e;
  }

  void call(Expr& e) {
    e.kind = Expr::Kind::Call;
    while (!is(")")) {
      if (peek().kind == Token::Kind::Name && t_[k_ + 1].kind == Token::Kind::Punct && t_[k_ + 1].text == "=") {
        NamedArg a{peek().text, 0, peek().column};
        k_ += 2;
        Expr v = unary();
        if (!v.is_literal() || v.literal_value().n_elem != 1) throw ProgramError(a.column, "syntax error: " + a.name + "= takes a number");
        a.value = v.literal_value()(0, 0);
        e.named.push_back(a);
      } else {
        if (!e.named.empty()) fail("expected a named argument (name=number) after " + e.named.back().name + "=");
        e.args.push_back(sum());
      }
      if (!accept(",")) break;
    }
    expect(")", "after the arguments of " + e.name);
  }

  // One signed number inside a matrix literal.
  double element() {
    const bool negative = accept("-");
    if (peek().kind != Token::Kind::Number) fail("a matrix holds numbers only; expected a number");
    const double v = number().literal(0, 0);
    return negative ? -v : v;
  }

  std::vector<double> row_of_numbers() {
    std::vector<double> row;
    expect("[", "to open a row");
    while (!is("]")) {
      row.push_back(element());
      if (row.size() > kMaxLiteralNumbers) throw ProgramError(peek().column, "a matrix of more than 100000 numbers");
      if (!accept(",")) break;
    }
    expect("]", "to close the row");
    return row;
  }

  Expr matrix() {
    Expr e;
    e.kind = Expr::Kind::Matrix;
    e.column = peek().column;
    std::vector<std::vector<double>> rows;
    if (t_[k_ + 1].kind == Token::Kind::Punct && t_[k_ + 1].text == "[") {
      ++k_;
      while (is("[")) {
        rows.push_back(row_of_numbers());
        if (rows.size() * rows[0].size() > kMaxLiteralNumbers) throw ProgramError(e.column, "a matrix of more than 100000 numbers");
        if (rows.back().size() != rows[0].size()) {
          throw ProgramError(e.column, "the rows of this matrix differ in length: row 1 has " + std::to_string(rows[0].size()) +
                                           " numbers, row " + std::to_string(rows.size()) + " has " + std::to_string(rows.back().size()));
        }
        if (!accept(",")) break;
      }
      expect("]", "to close the matrix");
    } else {
      rows.push_back(row_of_numbers());
    }
    if (rows[0].empty()) throw ProgramError(e.column, "an empty matrix; write at least one number");
    e.literal.set_size(rows.size(), rows[0].size());
    for (arma::uword i = 0; i < e.literal.n_rows; ++i) {
      for (arma::uword j = 0; j < e.literal.n_cols; ++j) e.literal(i, j) = rows[i][j];
    }
    return e;
  }

  std::vector<Token> t_;
  std::size_t k_ = 0;
};

}  // namespace

std::vector<Statement> parse_program(const std::string& text) {
  if (text.size() > kMaxProgramChars) throw ProgramError(kMaxProgramChars, "a program of more than 20000 characters");
  return Parser(tokens_of(text)).program();
}

}  // namespace explorer
