#include "page/explorer/exercise.h"

#include <algorithm>
#include <functional>
#include <optional>

#include "assignments/kit/norm_hints.h"
#include "autograd/text.h"
#include "check/diagnose.h"
#include "check/op_table.h"
#include "ops/ops.h"
#include "page/explorer/json.h"
#include "page/explorer/record.h"

namespace explorer {

namespace {

constexpr double kTolerance = 1e-13;  // of the exact gradient's largest element, as `autograd grade`
constexpr double kEps = 1e-5;

using Draw = std::function<ExerciseCase(ag::Rng& rng, ag::Shape shape)>;

struct Def {
  std::string name, title, statement, answer;
  std::vector<std::string> given;
  std::string hints;  // kit::norm_hint's kind: "layernorm", "rmsnorm" or ""
  std::vector<ag::Shape> shapes;
  Draw draw;
};

// d/dx of sum(dy * f(x, ...)) by the tape's own backward.
arma::mat tape_dx(const std::function<ag::Var(ag::Tape&, ag::Var x)>& f, const arma::mat& x, const arma::mat& dy) {
  ag::Tape tape;
  const ag::Var xv = tape.leaf(x, "x");
  tape.backward(f(tape, xv), dy);
  return xv.grad();
}

ExerciseCase norm_case(ag::Rng& rng, ag::Shape s, bool centre) {
  const arma::mat x = ag::draw(ag::Domain::Spread, s, rng), gamma = ag::draw(ag::Domain::Any, {1, s.cols}, rng);
  const arma::mat beta = ag::draw(ag::Domain::Any, {1, s.cols}, rng), dy = ag::draw(ag::Domain::Any, s, rng);
  const arma::vec mu = centre ? arma::vec(arma::mean(x, 1)) : arma::vec(s.rows, arma::fill::zeros);
  const arma::mat centred = x.each_col() - mu;
  const arma::vec rstd = 1.0 / arma::sqrt(arma::mean(arma::square(centred), 1) + kEps);
  ExerciseCase c{"random " + ag::shape_str(s.rows, s.cols), {}, {}};
  c.given = {{"dy", dy}, {"x", x}, {"xhat", centred.each_col() % rstd}, {"rstd", rstd}, {"gamma", gamma},
             {"eps", arma::mat(1, 1, arma::fill::value(kEps))}};
  if (centre) {
    c.given["mu"] = mu;
    c.given["beta"] = beta;
    c.exact = tape_dx([&](ag::Tape& t, ag::Var xv) { return ag::layernorm_composed(xv, t.constant(gamma), t.constant(beta), kEps); }, x, dy);
  } else {
    c.exact = tape_dx([&](ag::Tape& t, ag::Var xv) { return ag::rmsnorm_composed(xv, t.constant(gamma), kEps); }, x, dy);
  }
  return c;
}

ExerciseCase softmax_case(ag::Rng& rng, ag::Shape s) {
  const arma::mat x = ag::draw(ag::Domain::Any, s, rng), dy = ag::draw(ag::Domain::Any, s, rng);
  ExerciseCase c{"random " + ag::shape_str(s.rows, s.cols), {{"dy", dy}, {"x", x}}, {}};
  ag::Tape tape;
  c.given["y"] = ag::softmax(tape.constant(x), 1).value();
  c.exact = tape_dx([](ag::Tape&, ag::Var xv) { return ag::softmax(xv, 1); }, x, dy);
  return c;
}

ExerciseCase matmul_case(ag::Rng& rng, ag::Shape s) {
  const arma::uword m = s.cols + 1;  // B is K x M with M != K, so a transpose shows in the shape
  const arma::mat a = ag::draw(ag::Domain::Any, s, rng), b = ag::draw(ag::Domain::Any, {s.cols, m}, rng);
  const arma::mat dy = ag::draw(ag::Domain::Any, {s.rows, m}, rng);
  ExerciseCase c{"random A " + ag::shape_str(s.rows, s.cols) + ", B " + ag::shape_str(s.cols, m), {{"dY", dy}, {"A", a}, {"B", b}}, {}};
  c.exact = tape_dx([&](ag::Tape& t, ag::Var av) { return ag::matmul(av, t.constant(b)); }, a, dy);
  return c;
}

const std::vector<Def>& defs() {
  static const std::vector<Def> d = {
      {"layernorm_dx", "LayerNorm backward: dx",
       "y = xhat * gamma + beta, xhat = (x - mu) * rstd, mu = mean(x, dim=1), rstd = 1 / sqrt(var(x, dim=1) + eps), "
       "each row of x (N x D) normalised. Given the upstream gradient dy (N x D), write dx.",
       "dx", {"dy", "x", "xhat", "mu", "rstd", "gamma", "eps"}, "layernorm", {{1, 4}, {3, 5}, {2, 8}, {4, 3}},
       [](ag::Rng& r, ag::Shape s) { return norm_case(r, s, true); }},
      {"rmsnorm_dx", "RMSNorm backward: dx",
       "y = xhat * gamma, xhat = x * rstd, rstd = 1 / sqrt(mean(x^2, dim=1) + eps), each row of x (N x D). "
       "Given dy (N x D), write dx.",
       "dx", {"dy", "x", "xhat", "rstd", "gamma", "eps"}, "rmsnorm", {{1, 4}, {3, 5}, {2, 8}, {4, 3}},
       [](ag::Rng& r, ag::Shape s) { return norm_case(r, s, false); }},
      {"softmax_dx", "Softmax backward: dx",
       "y = softmax(x, dim=1): each row of y is exp(x) / sum(exp(x)) along the row. Given dy and y (N x D), write dx.",
       "dx", {"dy", "x", "y"}, "", {{1, 4}, {3, 5}, {2, 8}, {4, 3}}, softmax_case},
      {"matmul_dA", "Matrix product backward: dA",
       "Y = A @ B, A is N x K, B is K x M. Given dY (N x M), write dA.", "dA", {"dY", "A", "B"}, "",
       {{1, 4}, {3, 5}, {2, 3}, {4, 2}}, matmul_case},
  };
  return d;
}

const Def& def_named(const std::string& name) {
  std::vector<std::string> names;
  for (const Def& d : defs()) {
    if (d.name == name) return d;
    names.push_back(d.name);
  }
  throw ProgramError(1, "unknown exercise '" + name.substr(0, 40) + "'" + ag::did_you_mean(name, names, 3) +
                            "; the exercises are " + ag::join(names, ", "));
}

// The grader's diagnosis of a wrong gradient, then the norm exercises' named mistakes.
void diagnose_row(const Def& def, const ExerciseCase& c, const arma::mat& yours, ExerciseRow& row) {
  const arma::mat& x = c.exact;
  ag::DiagnoseOptions options;
  options.sizes = {{"D, the number of features", double(x.n_cols)}, {"N, the number of rows", double(x.n_rows)}};
  const ag::Diagnosis d = ag::diagnose_gradient(yours, c.exact, options);
  if (d.correct()) {
    row.result = "close, not exact";
    row.hint = "Yours is within finite differences' reach of the exact gradient, not within 1e-13 of its largest "
               "element: the check is exact, so write the formula, not an approximation.";
    return;
  }
  if (!def.hints.empty()) {
    kit::ExerciseSpec spec;
    spec.hints = def.hints;
    spec.eps = kEps;
    kit::DrawnCase drawn;
    drawn.inputs = {c.given.at("x"), c.given.at("gamma")};
    if (def.hints == "layernorm") drawn.inputs.push_back(c.given.at("beta"));
    drawn.dy = c.given.at("dy");
    const kit::NormHint named = kit::norm_hint(spec, drawn, 0, yours, d);
    if (!named.result.empty()) {
      row.result = named.result;
      row.hint = named.hint;
      return;
    }
  }
  row.result = ag::mistake_name(d.kind);
  row.hint = d.hint;
}

}  // namespace

int ExerciseReport::score() const {
  int s = 0;
  for (const ExerciseRow& r : rows) s += r.points;
  return s;
}

std::vector<std::string> exercise_names() {
  std::vector<std::string> names;
  for (const Def& d : defs()) names.push_back(d.name);
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<ExerciseCase> exercise_cases(const std::string& name, unsigned seed) {
  const Def& def = def_named(name);
  ag::Rng rng(seed);
  std::vector<ExerciseCase> cases;
  for (const ag::Shape& s : def.shapes) cases.push_back(def.draw(rng, s));
  return cases;
}

ExerciseRow check_gradient(const std::string& name, const ExerciseCase& c, const arma::mat& yours) {
  const Def& def = def_named(name);
  ExerciseRow row;
  row.check = c.label;
  const bool same = arma::size(yours) == arma::size(c.exact) && yours.is_finite();
  row.max_error = same ? arma::abs(yours - c.exact).max() : 0;
  if (same && row.max_error <= kTolerance * arma::abs(c.exact).max()) {
    row.points = 1;
    row.result = "correct";
    return row;
  }
  diagnose_row(def, c, yours, row);
  return row;
}

ExerciseReport check_exercise(const std::string& name, const std::string& answer, unsigned seed) {
  const Def& def = def_named(name);
  ExerciseReport report{def.name, def.title, def.statement, def.answer, def.given, {}};
  if (answer.find_first_not_of(" \t\n;") == std::string::npos) return report;
  const std::vector<Statement> program = parse_program(answer);
  std::optional<ProgramError> first_error;
  bool all_errors = true;
  for (const ExerciseCase& c : exercise_cases(name, seed)) {
    std::map<std::string, arma::mat> given;
    for (const std::string& g : def.given) given[g] = c.given.at(g);
    ag::Tape tape;
    try {
      const Recorded r = record(program, tape, given);
      const auto it = r.names.find(def.answer);
      if (it == r.names.end()) throw ProgramError(answer.size(), "the answer binds no " + def.answer + ": end with " + def.answer + " = ...");
      report.rows.push_back(check_gradient(name, c, it->second.value()));
      all_errors = false;
    } catch (const ProgramError& e) {  // this case's shapes only, unless every case fails so (below)
      if (!first_error) first_error = e;
      report.rows.push_back({c.label, 0, "error", e.what(), 0});
    }
  }
  if (all_errors) throw *first_error;
  return report;
}

std::string ExerciseReport::json() const {
  std::string given_json = "[", rows_json = "[", names_json = "[";
  for (const std::string& g : given) given_json += (given_json.size() > 1 ? "," : "") + quoted(g);
  for (const std::string& n : exercise_names()) names_json += (names_json.size() > 1 ? "," : "") + quoted(n);
  for (const ExerciseRow& r : rows) {
    rows_json += (rows_json.size() > 1 ? "," : "") + Object().text("check", r.check).num("points", r.points)
                     .text("result", r.result).text("hint", r.hint).num("max_error", r.max_error).str();
  }
  return Object().text("exercise", name).text("title", title).text("statement", statement).text("answer_name", answer_name)
      .raw("given", given_json + "]").raw("exercises", names_json + "]").raw("rows", rows_json + "]").num("score", score()).num("max_score", max_score()).str();
}

}  // namespace explorer
