#include "check/op_table.h"

#include <algorithm>
#include <cmath>

#include "ops/ops.h"

namespace ag {

namespace {

using V = const std::vector<Var>&;
using C = const std::vector<double>&;
constexpr Domain any = Domain::Any;

// Every way two operands broadcast: equal shapes; b a row, a column or a
// scalar; a the row; both (an outer sum).
std::vector<GradcheckCase> broadcast_cases() {
  return {{"", {{3, 4}, {3, 4}}},          {"row broadcast", {{3, 4}, {1, 4}}},
          {"column broadcast", {{3, 4}, {3, 1}}}, {"scalar broadcast", {{3, 4}, {1, 1}}},
          {"a broadcast", {{1, 4}, {3, 4}}},      {"outer", {{3, 1}, {1, 4}}}};
}

OpRow binary(std::string name, std::string forward, std::string backward, Domain b, ApplyFn apply) {
  return {std::move(name), std::move(forward), std::move(backward), {any, b}, Shapes::Broadcast, -1, {},
          broadcast_cases(), std::move(apply)};
}

OpRow unary(std::string name, std::string forward, std::string backward, Domain a, ApplyFn apply,
            std::vector<Constant> constants = {}) {
  return {std::move(name), std::move(forward), std::move(backward), {a}, Shapes::One, -1, std::move(constants),
          {{"", {{3, 4}}}}, std::move(apply)};
}

// A reduction along dim (0: down each column, 1: across each row).
OpRow along(std::string name, int dim, std::string forward, std::string backward, Domain a, ApplyFn apply) {
  return {std::move(name), std::move(forward), std::move(backward), {a}, Shapes::One, dim, {},
          {{"", {{3, 4}}}}, std::move(apply)};
}

// x (N x D, normalised along dim) with per-feature parameters gamma (and beta), 1 x D.
OpRow norm(std::string name, int dim, std::string forward, std::string backward, std::vector<Domain> inputs,
           ApplyFn apply) {
  std::vector<Shape> shapes = {dim == 1 ? Shape{3, 5} : Shape{5, 3}};
  shapes.resize(inputs.size(), Shape{1, shapes[0].cols});
  return {std::move(name), std::move(forward), std::move(backward), std::move(inputs), Shapes::PerFeature, dim,
          {{"eps", 1e-5, {1e-5, 0.1}}}, {{"", shapes}}, std::move(apply)};
}

std::vector<OpRow> build_ops() {
  const Domain pos = Domain::Positive;
  return {
      binary("add", "y = a + b", "da = dy; db = dy", any, [](V x, C) { return add(x[0], x[1]); }),
      binary("sub", "y = a - b", "da = dy; db = -dy", any, [](V x, C) { return sub(x[0], x[1]); }),
      binary("mul", "y = a * b", "da = dy * b; db = dy * a", any, [](V x, C) { return mul(x[0], x[1]); }),
      binary("div", "y = a / b", "da = dy / b; db = -dy * a / b^2", Domain::AwayFromZero,
             [](V x, C) { return div(x[0], x[1]); }),
      unary("neg", "y = -a", "da = -dy", any, [](V x, C) { return neg(x[0]); }),
      unary("add_scalar", "y = a + c", "da = dy", any, [](V x, C c) { return add_scalar(x[0], c[0]); },
            {{"c", 2.5, {-1, -0.5, 0.25, 0.5, 1}}}),
      unary("mul_scalar", "y = c * a", "da = c * dy", any, [](V x, C c) { return mul_scalar(x[0], c[0]); },
            {{"c", 2.5, {-2, -0.5, 0.5, 1.5, 2}}}),
      unary("pow_scalar", "y = a^p", "da = dy * p * a^(p-1)", Domain::PowerBase,
            [](V x, C c) { return pow_scalar(x[0], c[0]); }, {{"p", 1.5, {2, 3, 0.5, 1.5, -1, -0.5}}}),
      unary("exp", "y = exp(a)", "da = dy * y", Domain::ExpInput, [](V x, C) { return exp(x[0]); }),
      unary("log", "y = log(a)", "da = dy / a", pos, [](V x, C) { return log(x[0]); }),
      unary("sqrt", "y = sqrt(a)", "da = dy / (2 y)", pos, [](V x, C) { return sqrt(x[0]); }),
      unary("square", "y = a^2", "da = 2 a dy", any, [](V x, C) { return square(x[0]); }),
      unary("tanh", "y = tanh(a)", "da = dy * (1 - y^2)", any, [](V x, C) { return tanh(x[0]); }),
      unary("sigmoid", "y = 1 / (1 + exp(-a))", "da = dy * y * (1 - y)", any,
            [](V x, C) { return sigmoid(x[0]); }),
      unary("relu", "y = max(a, 0)", "da = dy where a > 0, else 0", Domain::Kink,
            [](V x, C) { return relu(x[0]); }),
      {"matmul", "Y = A B", "dA = dY B^T; dB = A^T dY", {any, any}, Shapes::Matmul, -1, {},
       {{"", {{3, 4}, {4, 2}}}}, [](V x, C) { return matmul(x[0], x[1]); }},
      unary("transpose", "Y = A^T", "dA = dY^T", any, [](V x, C) { return transpose(x[0]); }),
      unary("sum", "y = sum of all a  (1x1)", "da = dy everywhere", any, [](V x, C) { return sum(x[0]); }),
      along("sum(dim=0)", 0, "y_j = sum_i a_ij  (1xD)", "da_ij = dy_j", any, [](V x, C) { return sum(x[0], 0); }),
      along("sum(dim=1)", 1, "y_i = sum_j a_ij  (Nx1)", "da_ij = dy_i", any, [](V x, C) { return sum(x[0], 1); }),
      unary("mean", "y = sum of all a / n", "da = dy / n", any, [](V x, C) { return mean(x[0]); }),
      along("mean(dim=0)", 0, "y_j = mean_i a_ij", "da_ij = dy_j / N", any, [](V x, C) { return mean(x[0], 0); }),
      along("mean(dim=1)", 1, "y_i = mean_j a_ij", "da_ij = dy_i / D", any, [](V x, C) { return mean(x[0], -1); }),
      along("var(dim=0)", 0, "y_j = mean_i (a_ij - m_j)^2", "da_ij = dy_j 2 (a_ij - m_j) / N", any,
            [](V x, C) { return var(x[0], 0); }),
      along("var(dim=1)", 1, "y_i = mean_j (a_ij - m_i)^2", "da_ij = dy_i 2 (a_ij - m_i) / D", any,
            [](V x, C) { return var(x[0], -1); }),
      along("var_unbiased(dim=0)", 0, "y_j = sum_i (a_ij - m_j)^2 / (N-1)", "da_ij = dy_j 2 (a_ij - m_j) / (N-1)",
            Domain::TwoAlong, [](V x, C) { return var(x[0], 0, true); }),
      along("var_unbiased(dim=1)", 1, "y_i = sum_j (a_ij - m_i)^2 / (D-1)", "da_ij = dy_i 2 (a_ij - m_i) / (D-1)",
            Domain::TwoAlong, [](V x, C) { return var(x[0], -1, true); }),
      along("max(dim=0)", 0, "y_j = max_i a_ij", "da = dy at the arg-max, 0 elsewhere", Domain::MaxGap,
            [](V x, C) { return max(x[0], 0); }),
      along("max(dim=1)", 1, "y_i = max_j a_ij", "da = dy at the arg-max, 0 elsewhere", Domain::MaxGap,
            [](V x, C) { return max(x[0], 1); }),
      along("logsumexp(dim=0)", 0, "y_j = m_j + log sum_i exp(a_ij - m_j)", "da_ij = dy_j softmax(a)_ij", any,
            [](V x, C) { return logsumexp(x[0], 0); }),
      along("logsumexp(dim=1)", 1, "y_i = m_i + log sum_j exp(a_ij - m_i)", "da_ij = dy_i softmax(a)_ij", any,
            [](V x, C) { return logsumexp(x[0], 1); }),
      norm("layernorm_fused", 1, "y = (x - mean) * rstd * g + b, per row (one node)",
           "dx = rstd (dnorm - mean(dnorm) - norm mean(dnorm norm)), dnorm = dy g; dg = sum dy norm; db = sum dy",
           {Domain::Spread, any, any}, [](V x, C c) { return layernorm_fused(x[0], x[1], x[2], c[0]); }),
      norm("rmsnorm_fused", 1, "y = x * rstd * g, per row (one node)",
           "dx = rstd (dnorm - norm mean(dnorm norm)), dnorm = dy g; dg = sum dy norm", {Domain::Scale, any},
           [](V x, C c) { return rmsnorm_fused(x[0], x[1], c[0]); }),
  };
}

// Fixed targets in (0, 1) shaped like the prediction: a loss's gradcheck
// varies the prediction only.
arma::mat targets_like(const arma::mat& pred) {
  arma::mat t(arma::size(pred));
  for (arma::uword j = 0; j < t.n_cols; ++j) {
    for (arma::uword i = 0; i < t.n_rows; ++i) t(i, j) = 0.5 + 0.4 * std::sin(1.0 + i + 3.0 * j);
  }
  return t;
}

// Row i's class is i mod C (class 0 when there are no classes, which the loss refuses).
arma::uvec labels_like(const arma::mat& logits) {
  arma::uvec labels(logits.n_rows);
  for (arma::uword i = 0; i < labels.n_elem; ++i) labels(i) = logits.n_cols == 0 ? 0 : i % logits.n_cols;
  return labels;
}

std::vector<OpRow> build_composites() {
  return {
      norm("layernorm_composed", 1, "y = (x - mean) / sqrt(var + eps) * g + b, per row",
           "derived by the tape from the primitives it records (mean, var, sub, add_scalar, sqrt, div, mul, add)",
           {Domain::Spread, any, any}, [](V x, C c) { return layernorm_composed(x[0], x[1], x[2], c[0]); }),
      norm("rmsnorm_composed", 1, "y = x / sqrt(mean(x^2) + eps) * g, per row",
           "derived by the tape from square, mean, add_scalar, sqrt, div, mul", {Domain::Scale, any},
           [](V x, C c) { return rmsnorm_composed(x[0], x[1], c[0]); }),
      norm("batchnorm_composed", 0, "y = (x - mean) / sqrt(var + eps) * g + b, per column (training mode)",
           "derived by the tape from the same primitives along dim 0", {Domain::Spread, any, any},
           [](V x, C c) { return batchnorm_composed(x[0], x[1], x[2], c[0]); }),
      unary("c / a", "y = c / a  (double / Var)", "derived by the tape from c * a^-1 (pow_scalar, mul_scalar)",
            Domain::AwayFromZero, [](V x, C c) { return c[0] / x[0]; }, {{"c", 2.5, {}}}),
      unary("gelu", "y = 0.5 a (1 + tanh(sqrt(2/pi) (a + 0.044715 a^3)))",
            "derived by the tape from pow_scalar, mul_scalar, add, tanh, add_scalar, mul", any,
            [](V x, C) { return gelu(x[0]); }),
      unary("mse", "y = mean((a - t)^2), t a fixed target", "derived by the tape: da = 2 (a - t) / n", any,
            [](V x, C) { return mse(x[0], targets_like(x[0].value())); }),
      unary("softmax_cross_entropy", "y = mean_i (logsumexp(a_i) - a_i[label_i])",
            "derived by the tape: da = (softmax(a) - onehot(label)) / N", any,
            [](V x, C) { return softmax_cross_entropy(x[0], labels_like(x[0].value())); }),
      unary("bce_with_logits", "y = mean(softplus(a) - t a), t a fixed target",
            "derived by the tape: da = (sigmoid(a) - t) / n", any,
            [](V x, C) { return bce_with_logits(x[0], targets_like(x[0].value())); }),
  };
}

}  // namespace

const std::vector<OpRow>& op_table() {
  static const std::vector<OpRow> table = build_ops();
  return table;
}

const std::vector<OpRow>& composites() {
  static const std::vector<OpRow> table = build_composites();
  return table;
}

const OpRow* find_op(const std::string& node_op) {
  for (const OpRow& row : op_table()) {
    if (row.name == node_op) return &row;
  }
  return nullptr;
}

std::vector<const OpRow*> all_rows() {
  std::vector<const OpRow*> rows;
  for (const std::vector<OpRow>* list : {&op_table(), &composites()}) {
    for (const OpRow& row : *list) rows.push_back(&row);
  }
  return rows;
}

const OpRow& row_named(const std::string& name) {
  for (const OpRow* row : all_rows()) {
    if (row->name == name) return *row;
  }
  throw Error("the op table has no row '" + name + "'");
}

std::vector<double> default_constants(const OpRow& row) {
  std::vector<double> values;
  for (const Constant& c : row.constants) values.push_back(c.value);
  return values;
}

TapeFunction tape_function(const OpRow& row) {
  // The rows are static, so the function may keep a reference to one.
  return [&row, constants = default_constants(row)](Tape&, const std::vector<Var>& inputs) {
    return row.apply(inputs, constants);
  };
}

std::string case_name(const OpRow& row, const GradcheckCase& c) {
  return c.label.empty() ? row.name : row.name + " (" + c.label + ")";
}

std::string shapes_str(const GradcheckCase& c) {
  std::string s;
  for (const Shape& shape : c.shapes) s += (s.empty() ? "" : ", ") + shape_str(shape.rows, shape.cols);
  return s;
}

std::string op_table_markdown() {
  std::string md;
  auto table = [&md](const char* first_column, const std::vector<OpRow>& rows) {
    md += std::string("| ") + first_column + " | forward | backward |\n|---|---|---|\n";
    for (const OpRow& row : rows) md += "| `" + row.name + "` | " + row.forward + " | " + row.backward + " |\n";
  };
  table("op", op_table());
  md += "\nComposed from the ops above; no node carries these names:\n\n";
  table("function", composites());
  return md;
}

}  // namespace ag

// ---- domains: drawing values, and accepting values the fuzzer already has ----

namespace ag {

namespace {

template <class Pred>
bool all_of(const arma::mat& x, Pred ok) {
  return std::all_of(x.begin(), x.end(), ok);  // true for an empty x
}

arma::uword count_along(const arma::mat& x, int dim) { return dim == 0 ? x.n_rows : x.n_cols; }

// The two largest values along dim differ by at least `gap` (a tie has no derivative).
bool max_has_gap(const arma::mat& x, int dim, double gap) {
  if (count_along(x, dim) < 2) return true;
  const arma::mat sorted = arma::sort(x, "descend", dim);
  const arma::mat top = dim == 0 ? arma::mat(sorted.row(0) - sorted.row(1)) : arma::mat(sorted.col(0) - sorted.col(1));
  return all_of(top, [gap](double v) { return v >= gap; });
}

}  // namespace

arma::mat draw(Domain domain, Shape shape, Rng& rng) {
  arma::mat m(shape.rows, shape.cols);
  for (double& v : m) {
    switch (domain) {
      case Domain::Positive:
      case Domain::PowerBase: v = rng.uniform(0.5, 2.0); break;
      case Domain::AwayFromZero:
      case Domain::Kink: v = rng.uniform(0.5, 2.0) * (rng.uniform() < 0.5 ? -1.0 : 1.0); break;
      case Domain::Any:
      case Domain::ExpInput:
      case Domain::MaxGap:
      case Domain::TwoAlong:
      case Domain::Spread:
      case Domain::Scale: v = rng.uniform(-2.0, 2.0); break;  // inside these (ties and tiny spreads aside)
    }
  }
  return m;
}

std::vector<arma::mat> make_inputs(const OpRow& row, const GradcheckCase& c, Rng& rng) {
  std::vector<arma::mat> inputs;
  for (std::size_t k = 0; k < row.inputs.size(); ++k) inputs.push_back(draw(row.inputs[k], c.shapes.at(k), rng));
  return inputs;
}

bool accepts(const OpRow& row, std::size_t k, const arma::mat& x, const std::vector<double>& constants) {
  const int d = row.dim;
  switch (row.inputs.at(k)) {
    case Domain::Any: return true;
    case Domain::Positive: return all_of(x, [](double v) { return v >= 0.25; });
    case Domain::PowerBase: {
      // Whole powers are defined everywhere; fractional and negative ones need x > 0.
      const double p = constants.at(0);
      return (p > 0 && p == std::round(p)) || all_of(x, [](double v) { return v >= 0.25; });
    }
    case Domain::AwayFromZero: return all_of(x, [](double v) { return std::abs(v) >= 0.3; });
    case Domain::Kink: return all_of(x, [](double v) { return std::abs(v) >= 0.01; });
    case Domain::ExpInput: return all_of(x, [](double v) { return v <= 4.6; });
    case Domain::MaxGap: return max_has_gap(x, d, 0.01);
    case Domain::TwoAlong: return count_along(x, d) >= 2;
    case Domain::Spread:
      return count_along(x, d) >= 2 && all_of(arma::var(x, 1, d), [](double v) { return v >= 0.01; });
    case Domain::Scale:
      return count_along(x, d) >= 1 && all_of(arma::mean(arma::square(x), d), [](double v) { return v >= 0.01; });
  }
  return false;
}

}  // namespace ag
