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

// A row, field by field by name: the def says what the op is, the rest is
// what checking it needs. By default one input of any value, one 3x4 case.
class Row {
 public:
  explicit Row(const OpDef& def) {
    row_.def = &def;
    row_.name = def.name;
    row_.inputs = {any};
    row_.cases = {{"", {{3, 4}}}};
  }
  Row& inputs(std::vector<Domain> domains) { row_.inputs = std::move(domains); return *this; }
  Row& shapes(Shapes s) { row_.shapes = s; return *this; }
  Row& along(int dim) { row_.dim = dim; return *this; }
  Row& constant(const char* name, double value, std::vector<double> choices = {}) {
    row_.constants.push_back({name, value, std::move(choices)});
    return *this;
  }
  Row& cases(std::vector<GradcheckCase> c) { row_.cases = std::move(c); return *this; }
  Row& note(std::string text) { row_.note = std::move(text); return *this; }
  Row& result_shape(std::function<Shape(const std::vector<Shape>&)> f) { row_.result_shape = std::move(f); return *this; }
  Row& apply(ApplyFn f) { row_.apply = std::move(f); return *this; }
  operator OpRow() const { return row_; }

 private:
  OpRow row_;
};

Row binary(const OpDef& def, Domain b, ApplyFn f) {
  return std::move(Row(def).inputs({any, b}).shapes(Shapes::Broadcast).cases(broadcast_cases()).apply(std::move(f)));
}

Row unary(const OpDef& def, Domain a, ApplyFn f) { return std::move(Row(def).inputs({a}).apply(std::move(f))); }

// A reduction (or softmax) along dim, 0: down each column, 1: across each row.
// The dim is said once: it picks the def and is what the op is applied with.
using AlongFn = std::function<Var(Var x, int dim)>;
Row along(const OpDef& (*def)(int), int dim, Domain a, AlongFn f) {
  return std::move(Row(def(dim)).inputs({a}).along(dim).apply([f, dim](V x, C) { return f(x[0], dim); }));
}

// x (N x D, normalised along dim) with per-feature parameters gamma (and beta), 1 x D.
Row norm(const OpDef& def, int dim, std::vector<Domain> inputs, ApplyFn f) {
  std::vector<Shape> shapes = {dim == 1 ? Shape{3, 5} : Shape{5, 3}};
  shapes.resize(inputs.size(), Shape{1, shapes[0].cols});
  return std::move(Row(def).inputs(std::move(inputs)).shapes(Shapes::PerFeature).along(dim)
                       .constant("eps", 1e-5, {1e-5, 0.1}).cases({{"", shapes}}).apply(std::move(f)));
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

std::vector<OpRow> elementwise_rows() {
  return {
      binary(add_def(), any, [](V x, C) { return add(x[0], x[1]); }),
      binary(sub_def(), any, [](V x, C) { return sub(x[0], x[1]); }),
      binary(mul_def(), any, [](V x, C) { return mul(x[0], x[1]); }),
      binary(div_def(), Domain::AwayFromZero, [](V x, C) { return div(x[0], x[1]); }),
      unary(neg_def(), any, [](V x, C) { return neg(x[0]); }),
      unary(add_scalar_def(), any, [](V x, C c) { return add_scalar(x[0], c[0]); }).constant("c", 2.5, {-1, -0.5, 0.25, 0.5, 1}),
      unary(mul_scalar_def(), any, [](V x, C c) { return mul_scalar(x[0], c[0]); }).constant("c", 2.5, {-2, -0.5, 0.5, 1.5, 2}),
      unary(pow_scalar_def(), Domain::PowerBase, [](V x, C c) { return pow_scalar(x[0], c[0]); })
          .constant("p", 1.5, {2, 3, 0.5, 1.5, -1, -0.5}),
      unary(exp_def(), Domain::ExpInput, [](V x, C) { return exp(x[0]); }),
      unary(log_def(), Domain::Positive, [](V x, C) { return log(x[0]); }),
      unary(sqrt_def(), Domain::Positive, [](V x, C) { return sqrt(x[0]); }),
      unary(square_def(), any, [](V x, C) { return square(x[0]); }),
      unary(tanh_def(), any, [](V x, C) { return tanh(x[0]); }),
      unary(sigmoid_def(), any, [](V x, C) { return sigmoid(x[0]); }),
      unary(relu_def(), Domain::Kink, [](V x, C) { return relu(x[0]); }),
      Row(matmul_def()).inputs({any, any}).shapes(Shapes::Matmul).cases({{"", {{3, 4}, {4, 2}}}})
          .apply([](V x, C) { return matmul(x[0], x[1]); }),
      unary(transpose_def(), any, [](V x, C) { return transpose(x[0]); }),
  };
}

std::vector<OpRow> reduction_rows() {
  auto var_biased = [](Var x, int d) { return var(x, d); };
  auto var_unbiased = [](Var x, int d) { return var(x, d, true); };
  auto unbiased_def = [](int d) -> const OpDef& { return var_def(d, true); };
  return {
      unary(sum_def(), any, [](V x, C) { return sum(x[0]); }),
      along(sum_def, 0, any, [](Var x, int d) { return sum(x, d); }),
      along(sum_def, 1, any, [](Var x, int d) { return sum(x, d); }),
      unary(mean_def(), any, [](V x, C) { return mean(x[0]); }),
      along(mean_def, 0, any, [](Var x, int d) { return mean(x, d); }),
      along(mean_def, 1, any, [](Var x, int d) { return mean(x, d); }),
      along([](int d) -> const OpDef& { return var_def(d); }, 0, any, var_biased),
      along([](int d) -> const OpDef& { return var_def(d); }, 1, any, var_biased),
      along(unbiased_def, 0, Domain::TwoAlong, var_unbiased),
      along(unbiased_def, 1, Domain::TwoAlong, var_unbiased),
      along(max_def, 0, Domain::MaxGap, [](Var x, int d) { return max(x, d); }),
      along(max_def, 1, Domain::MaxGap, [](Var x, int d) { return max(x, d); }),
      along(logsumexp_def, 0, any, [](Var x, int d) { return logsumexp(x, d); }),
      along(logsumexp_def, 1, any, [](Var x, int d) { return logsumexp(x, d); }),
  };
}

std::vector<OpRow> fused_rows() {
  return {
      norm(layernorm_fused_def(), 1, {Domain::Spread, any, any},
           [](V x, C c) { return layernorm_fused(x[0], x[1], x[2], c[0]); }),
      norm(rmsnorm_fused_def(), 1, {Domain::Scale, any}, [](V x, C c) { return rmsnorm_fused(x[0], x[1], c[0]); }),
      along(softmax_def, 0, any, [](Var x, int d) { return softmax(x, d); }),
      along(softmax_def, 1, any, [](Var x, int d) { return softmax(x, d); }),
      along(log_softmax_def, 0, any, [](Var x, int d) { return log_softmax(x, d); }),
      along(log_softmax_def, 1, any, [](Var x, int d) { return log_softmax(x, d); }),
      unary(gelu_fused_def(), any, [](V x, C) { return gelu_fused(x[0]); }),
  };
}

std::vector<OpRow> indexing_rows() {
  auto join_shape = [](bool side_by_side) {
    return [side_by_side](const std::vector<Shape>& s) {
      return side_by_side ? Shape{s[0].rows, s[0].cols + s[1].cols} : Shape{s[0].rows + s[1].rows, s[0].cols};
    };
  };
  return {
      unary(embedding_def(), any, [](V x, C) { return embedding(x[0], indices_like(x[0].value())); })
          .note("here index_k = 2k mod N, K = 5"),
      Row(rows_def()).constant("first", 1, {0, 1}).constant("count", 2, {1, 2}).cases({{"", {{5, 4}}}})
          .apply([](V x, C c) { return rows(x[0], arma::uword(c[0]), arma::uword(c[1])); }),
      Row(cols_def()).constant("first", 1, {0, 1}).constant("count", 2, {1, 2}).cases({{"", {{4, 5}}}})
          .apply([](V x, C c) { return cols(x[0], arma::uword(c[0]), arma::uword(c[1])); }),
      // Every part: the per-node check replays a node of three parts with three.
      Row(hcat_def()).inputs({any, any}).shapes(Shapes::Broadcast).cases({{"", {{3, 4}, {3, 2}}}})
          .apply([](V x, C) { return hcat(x); }).result_shape(join_shape(true)),
      Row(vcat_def()).inputs({any, any}).shapes(Shapes::Broadcast).cases({{"", {{3, 4}, {2, 4}}}})
          .apply([](V x, C) { return vcat(x); }).result_shape(join_shape(false)),
      unary(masked_fill_def(), any, [](V x, C c) { return masked_fill(x[0], mask_like(x[0].value()), c[0]); })
          .constant("value", -1.5, {-2, 0, 1}).note("here masked: column > row"),
      unary(dropout_def(), any,
            [](V x, C c) {
              Rng rng(7);  // the same keep-mask on every call, so finite differences see one function
              return dropout(x[0], c[0], rng, true);
            })
          .constant("p", 0.5, {0.25, 0.5}),
  };
}

std::vector<OpRow> build_ops() {
  std::vector<OpRow> rows;
  for (std::vector<OpRow> part : {elementwise_rows(), reduction_rows(), fused_rows(), indexing_rows()}) {
    rows.insert(rows.end(), part.begin(), part.end());
  }
  return rows;
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
      norm(layernorm_composed_def(), 1, {Domain::Spread, any, any},
           [](V x, C c) { return layernorm_composed(x[0], x[1], x[2], c[0]); }),
      norm(rmsnorm_composed_def(), 1, {Domain::Scale, any}, [](V x, C c) { return rmsnorm_composed(x[0], x[1], c[0]); }),
      norm(batchnorm_composed_def(), 0, {Domain::Spread, any, any},
           [](V x, C c) { return batchnorm_composed(x[0], x[1], x[2], c[0]); }),
      unary(scalar_div_def(), Domain::AwayFromZero, [](V x, C c) { return c[0] / x[0]; }).constant("c", 2.5),
      unary(gelu_def(), any, [](V x, C) { return gelu(x[0]); }),
      unary(mse_def(), any, [](V x, C) { return mse(x[0], targets_like(x[0].value())); }),
      unary(softmax_cross_entropy_def(), any,
            [](V x, C) { return softmax_cross_entropy(x[0], labels_like(x[0].value())); }),
      unary(bce_with_logits_def(), any, [](V x, C) { return bce_with_logits(x[0], targets_like(x[0].value())); }),
      along(softmax_composed_def, 0, any, [](Var x, int d) { return softmax_composed(x, d); }),
      along(softmax_composed_def, 1, any, [](Var x, int d) { return softmax_composed(x, d); }),
      along(log_softmax_composed_def, 0, any, [](Var x, int d) { return log_softmax_composed(x, d); }),
      along(log_softmax_composed_def, 1, any, [](Var x, int d) { return log_softmax_composed(x, d); }),
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

std::string forward_text(const OpRow& row) {
  return std::string(row.def->forward) + (row.note.empty() ? "" : "; " + row.note);
}

std::string op_table_markdown() {
  std::string md;
  auto table = [&md](const char* first_column, const std::vector<OpRow>& rows) {
    md += std::string("| ") + first_column + " | forward | backward | forward mode (JVP) |\n|---|---|---|---|\n";
    for (const OpRow& row : rows) {
      md += "| `" + row.name + "` | " + forward_text(row) + " | " + row.def->backward + " | " + row.def->tangent + " |\n";
    }
  };
  table("op", op_table());
  md += "\nComposed from the ops above; no node carries these names:\n\n";
  table("function", composites());
  return md;
}

}  // namespace ag
