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

// K = 5 indices 2k mod N, so a table of 3 rows is read as 0, 2, 1, 0, 2: every row, two of them twice.
// A table of no rows has no index to give: 0 each, which embedding refuses.
arma::uvec indices_like(const arma::mat& table) {
  arma::uvec indices(5);
  for (arma::uword k = 0; k < indices.n_elem; ++k) indices(k) = table.n_rows == 0 ? 0 : (2 * k) % table.n_rows;
  return indices;
}

// A causal pattern of x's shape: entry (i, j) masked when j > i.
arma::umat mask_like(const arma::mat& x) {
  arma::umat mask(arma::size(x), arma::fill::zeros);
  for (arma::uword j = 0; j < x.n_cols; ++j) {
    for (arma::uword i = 0; i < std::min(j, x.n_rows); ++i) mask(i, j) = 1;
  }
  return mask;
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
      along("softmax(dim=0)", 0, "y_ij = exp(a_ij - logsumexp_i a_ij), down each column (one node)",
            "da = y (dy - sum_i dy y), saving only y", any, [](V x, C) { return softmax(x[0], 0); }),
      along("softmax(dim=1)", 1, "y_ij = exp(a_ij - logsumexp_j a_ij), across each row (one node)",
            "da = y (dy - sum_j dy y), saving only y", any, [](V x, C) { return softmax(x[0], 1); }),
      along("log_softmax(dim=0)", 0, "y_ij = a_ij - logsumexp_i a_ij (one node)", "da = dy - exp(y) sum_i dy, saving only y",
            any, [](V x, C) { return log_softmax(x[0], 0); }),
      along("log_softmax(dim=1)", 1, "y_ij = a_ij - logsumexp_j a_ij (one node)", "da = dy - exp(y) sum_j dy, saving only y",
            any, [](V x, C) { return log_softmax(x[0], 1); }),
      unary("gelu_fused", "y = 0.5 a (1 + t), t = tanh(sqrt(2/pi) (a + 0.044715 a^3)) (one node)",
            "da = dy (0.5 (1 + t) + 0.5 a (1 - t^2) sqrt(2/pi) (1 + 3 * 0.044715 a^2)), saving only a", any,
            [](V x, C) { return gelu_fused(x[0]); }),
      unary("embedding", "y_k = row index_k of the table  (K x D; here index_k = 2k mod N, K = 5)",
            "dtable row index_k += dy_k (repeated indices add up)", any,
            [](V x, C) { return embedding(x[0], indices_like(x[0].value())); }),
      {"rows", "Y = A.rows(first, first + count - 1)", "dA = dY in that block, 0 elsewhere", {any}, Shapes::One, -1,
       {{"first", 1, {0, 1}}, {"count", 2, {1, 2}}}, {{"", {{5, 4}}}},
       [](V x, C c) { return rows(x[0], arma::uword(c[0]), arma::uword(c[1])); }},
      {"cols", "Y = A.cols(first, first + count - 1)", "dA = dY in that block, 0 elsewhere", {any}, Shapes::One, -1,
       {{"first", 1, {0, 1}}, {"count", 2, {1, 2}}}, {{"", {{4, 5}}}},
       [](V x, C c) { return cols(x[0], arma::uword(c[0]), arma::uword(c[1])); }},
      // Every part: the per-node check replays a node of three parts with three.
      {"hcat", "Y = [A B]  (side by side)", "dA = dY's first columns, dB = the rest", {any, any}, Shapes::Broadcast,
       -1, {}, {{"", {{3, 4}, {3, 2}}}}, [](V x, C) { return hcat(x); },
       [](const std::vector<Shape>& s) { return Shape{s[0].rows, s[0].cols + s[1].cols}; }},
      {"vcat", "Y = [A; B]  (stacked)", "dA = dY's first rows, dB = the rest", {any, any}, Shapes::Broadcast, -1, {},
       {{"", {{3, 4}, {2, 4}}}}, [](V x, C) { return vcat(x); },
       [](const std::vector<Shape>& s) { return Shape{s[0].rows + s[1].rows, s[0].cols}; }},
      unary("masked_fill", "y = value where masked, a elsewhere  (here masked: column > row)",
            "da = dy where not masked, 0 where masked", any,
            [](V x, C c) { return masked_fill(x[0], mask_like(x[0].value()), c[0]); },
            {{"value", -1.5, {-2, 0, 1}}}),
      unary("dropout", "y = a * keep / (1 - p), keep = 1 with probability 1 - p, else 0",
            "da = dy * keep / (1 - p)", any,
            [](V x, C c) {
              Rng rng(7);  // the same keep-mask on every call, so finite differences see one function
              return dropout(x[0], c[0], rng, true);
            },
            {{"p", 0.5, {0.25, 0.5}}}),
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
      along("softmax_composed(dim=0)", 0, "y = exp(a - logsumexp(a)), down each column",
            "derived by the tape from logsumexp, sub, exp", any, [](V x, C) { return softmax_composed(x[0], 0); }),
      along("softmax_composed(dim=1)", 1, "y = exp(a - logsumexp(a)), across each row",
            "derived by the tape from logsumexp, sub, exp", any, [](V x, C) { return softmax_composed(x[0], 1); }),
      along("log_softmax_composed(dim=0)", 0, "y = a - logsumexp(a), down each column",
            "derived by the tape from logsumexp, sub", any, [](V x, C) { return log_softmax_composed(x[0], 0); }),
      along("log_softmax_composed(dim=1)", 1, "y = a - logsumexp(a), across each row",
            "derived by the tape from logsumexp, sub", any, [](V x, C) { return log_softmax_composed(x[0], 1); }),
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
