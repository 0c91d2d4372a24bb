#include "ops/indexing.h"

#include <cmath>
#include <memory>
#include <utility>
#include <string>

#include "autograd/format.h"
#include "autograd/custom_op.h"
#include "ops/elementwise.h"

namespace ag {

namespace {

using J = const JvpArgs&;

// embedding, masked_fill and dropout depend on a tensor that is not an input
// (indices, a mask, a drawn keep-mask). Their node keeps its forward as a
// Function, so the per-node check (check/node_check.h) replays it with that
// tensor; the op-table row could only replay the tensor its own cases use.
// The Function's closures and the op's own forward-mode rule share that one
// tensor (`extra_bytes`); no input value is saved (only their shapes).
Var record_function(Tape& t, const OpDef& def, Function f, const std::vector<Var>& inputs, arma::mat y,
                    std::size_t extra_bytes, JvpFn jvp) {
  return t.record(def, inputs, std::move(y), CustomBackward{std::move(f)}, Saved{{}, false, extra_bytes},
                  std::move(jvp));
}

// The extent of x along an axis, and what a message calls one step of it.
arma::uword extent(const arma::mat& x, Axis axis) { return axis == Axis::Rows ? x.n_rows : x.n_cols; }
const char* unit(Axis axis) { return axis == Axis::Rows ? "rows" : "columns"; }
// Where a block starting at k along the axis sits: its first row and column.
arma::uword row_at(Axis axis, arma::uword k) { return axis == Axis::Rows ? k : 0; }
arma::uword col_at(Axis axis, arma::uword k) { return axis == Axis::Rows ? 0 : k; }

// The `count` rows (or columns) from `first` on must exist; no overflow in first + count.
void check_block(const char* op, Axis axis, const arma::mat& x, arma::uword first, arma::uword count) {
  const arma::uword n = extent(x, axis);
  if (count <= n && first <= n - count) return;
  const std::string what = unit(axis);
  throw Error(std::string(op) + ": " + what + " " + std::to_string(first) + " to " + std::to_string(first) + " + " +
              std::to_string(count) + " - 1 are out of range for a " + shape_str(x) + " input (it has " +
              std::to_string(n) + " " + what + ")");
}

// x's block at (r, c) of size s. An empty block may sit just past the end,
// which Armadillo's submat refuses, so it is made, not cut.
arma::mat block(const arma::mat& x, arma::uword r, arma::uword c, arma::SizeMat s) {
  if (s.n_rows == 0 || s.n_cols == 0) return arma::mat(s.n_rows, s.n_cols);
  return x.submat(r, c, s);
}
void put_block(arma::mat& x, arma::uword r, arma::uword c, const arma::mat& b) {
  if (!b.is_empty()) x.submat(r, c, arma::size(b)) = b;
}

// Every part on t (the first part's tape), each a Var of that tape now.
void check_parts(const char* op, Tape& t, const std::vector<Var>& parts) {
  for (std::size_t k = 0; k < parts.size(); ++k) {
    if (parts[k].tape != &t) {
      throw Error(std::string(op) + ": part " + std::to_string(k) +
                  " is not on part 0's tape (or is an empty Var); every part must be recorded on one tape");
    }
    t.check(parts[k], op);
  }
}

// rows and cols: the block of `count` from `first` on along the axis; dx = dy there, 0 elsewhere.
Var cut(const OpDef& def, Axis axis, Var x, arma::uword first, arma::uword count) {
  Tape& t = tape_of(def.name, x);
  const arma::mat& v = x.value();
  check_block(def.name, axis, v, first, count);
  const arma::uword r = row_at(axis, first), c = col_at(axis, first);
  const arma::SizeMat size = axis == Axis::Rows ? arma::size(count, v.n_cols) : arma::size(v.n_rows, count);
  Var y = t.record(def, {x}, block(v, r, c, size), [r, c](Tape& t, const Node& n) {
    t.accumulate_block(n.inputs[0], r, c, n.grad);  // dx is zero outside the slice
  });
  t.set_attribute(y, "first", double(first));
  t.set_attribute(y, "count", double(count));
  return y;
}

// hcat (parts side by side: joined along the columns) and vcat (stacked: along the rows).
Var join(const OpDef& def, Axis axis, const std::vector<Var>& parts) {
  if (parts.empty()) throw Error(std::string(def.name) + ": no parts to join (an empty list); expected at least one Var");
  Tape& t = tape_of(def.name, parts[0]);
  check_parts(def.name, t, parts);
  const Axis across = axis == Axis::Rows ? Axis::Cols : Axis::Rows;  // the extent every part shares
  const arma::uword shared = extent(parts[0].value(), across);
  std::vector<arma::uword> first;  // where each part starts along the axis
  arma::uword length = 0;
  for (std::size_t k = 0; k < parts.size(); ++k) {
    if (extent(parts[k].value(), across) != shared) {
      throw Error(std::string(def.name) + ": part " + std::to_string(k) + " is " + parts[k].shape() + " but part 0 is " +
                  parts[0].shape() + (axis == Axis::Cols ? "; side by side" : "; stacked") + ", every part needs " +
                  std::to_string(shared) + " " + unit(across));
    }
    first.push_back(length);
    length += extent(parts[k].value(), axis);
  }
  arma::mat y = axis == Axis::Rows ? arma::mat(length, shared) : arma::mat(shared, length);
  for (std::size_t k = 0; k < parts.size(); ++k) put_block(y, row_at(axis, first[k]), col_at(axis, first[k]), parts[k].value());
  return t.record(def, parts, std::move(y), [first, axis](Tape& t, const Node& n) {
    for (std::size_t k = 0; k < n.inputs.size(); ++k) {
      const arma::uword end = k + 1 < first.size() ? first[k + 1] : extent(n.grad, axis);
      const arma::uword len = end - first[k];
      const arma::SizeMat size = axis == Axis::Rows ? arma::size(len, n.grad.n_cols) : arma::size(n.grad.n_rows, len);
      t.accumulate(n.inputs[k], block(n.grad, row_at(axis, first[k]), col_at(axis, first[k]), size));
    }
  });
}

}  // namespace

const OpDef& embedding_def() {
  static const OpDef def{"embedding", 1, "y_k = row index_k of the table  (K x D)",
                         "dtable row index_k += dy_k (repeated indices add up)", "dy_k = row index_k of dtable",
                         {}};  // its nodes carry their own rule, holding their indices
  return def;
}
Var embedding(Var table, const arma::uvec& indices) {
  const OpDef& def = embedding_def();
  Tape& t = tape_of(def.name, table);
  const arma::mat& w = table.value();
  for (arma::uword i = 0; i < indices.n_elem; ++i) {
    if (indices(i) >= w.n_rows) {
      throw Error(std::string(def.name) + ": index " + std::to_string(indices(i)) + " (position " + std::to_string(i) +
                  ") is out of range for a " + shape_str(w) + " table; expected indices below " +
                  std::to_string(w.n_rows));
    }
  }
  auto shared = std::make_shared<const arma::uvec>(indices);
  Function f{def.name, [shared](const Inputs& in) { return arma::mat(in[0].rows(*shared)); },
             [shared](const Inputs& in, const arma::mat&, const arma::mat& dout) {
               arma::mat dtable(arma::size(in[0]), arma::fill::zeros);
               if (dtable.n_cols == 0) return Grads{dtable};  // rows of nothing: Armadillo's row += would read null
               for (arma::uword i = 0; i < shared->n_elem; ++i) dtable.row((*shared)(i)) += dout.row(i);
               return Grads{dtable};
             }};
  arma::mat y = w.rows(indices);
  return record_function(t, def, std::move(f), {table}, std::move(y), indices.n_elem * sizeof(arma::uword),
                         [shared](J j) { return embedding(j.dx[0], *shared); });
}

const OpDef& rows_def() {
  static const OpDef def{"rows", 1, "Y = A.rows(first, first + count - 1)", "dA = dY in that block, 0 elsewhere",
                         "dY = dA.rows(first, first + count - 1)", [](J j) {
                           return rows(j.dx[0], arma::uword(attribute(j.node, "first")),
                                       arma::uword(attribute(j.node, "count")));
                         }};
  return def;
}
Var rows(Var x, arma::uword first, arma::uword count) { return cut(rows_def(), Axis::Rows, x, first, count); }

const OpDef& cols_def() {
  static const OpDef def{"cols", 1, "Y = A.cols(first, first + count - 1)", "dA = dY in that block, 0 elsewhere",
                         "dY = dA.cols(first, first + count - 1)", [](J j) {
                           return cols(j.dx[0], arma::uword(attribute(j.node, "first")),
                                       arma::uword(attribute(j.node, "count")));
                         }};
  return def;
}
Var cols(Var x, arma::uword first, arma::uword count) { return cut(cols_def(), Axis::Cols, x, first, count); }

const OpDef& hcat_def() {
  static const OpDef def{"hcat", -1, "Y = [A B]  (side by side)", "dA = dY's first columns, dB = the rest",
                         "dY = [dA dB]", [](J j) { return hcat(j.dx); }};
  return def;
}
Var hcat(const std::vector<Var>& parts) { return join(hcat_def(), Axis::Cols, parts); }

const OpDef& vcat_def() {
  static const OpDef def{"vcat", -1, "Y = [A; B]  (stacked)", "dA = dY's first rows, dB = the rest",
                         "dY = [dA; dB]", [](J j) { return vcat(j.dx); }};
  return def;
}
Var vcat(const std::vector<Var>& parts) { return join(vcat_def(), Axis::Rows, parts); }

// ---- masking and dropout ------------------------------------------------------

namespace {
// Anomaly mode reports every inf a node produces; the -inf a masked_fill writes
// where its mask says is what the caller asked for (a causal mask). So the
// node's other entries are checked here and it is recorded with the tape's
// check paused, restored however record returns.
class AnomalyPause : TapeFlagScope {
 public:
  explicit AnomalyPause(Tape& t) : TapeFlagScope(t, &Tape::anomaly_mode, &Tape::set_anomaly_mode, false) {}
};
}  // namespace

namespace {
// masked_fill's rule: dy = da where not masked, 0 where masked (da times a constant 0/1).
JvpFn unmasked_tangent(std::shared_ptr<const arma::uvec> masked) {
  return [masked](J j) {
    arma::mat keep(arma::size(j.dx[0].value()), arma::fill::ones);
    keep.elem(*masked).zeros();
    return j.dx[0] * j.tape.constant(keep, "not masked");
  };
}
}  // namespace

const OpDef& masked_fill_def() {
  static const OpDef def{"masked_fill", 1, "y = value where masked, a elsewhere",
                         "da = dy where not masked, 0 where masked", "dy = da where not masked, 0 where masked",
                         {}};  // its nodes carry their own rule, holding their mask
  return def;
}
Var masked_fill(Var x, const arma::umat& mask, double value) {
  const OpDef& def = masked_fill_def();
  const std::string name = def.name;
  Tape& t = tape_of(def.name, x);
  if (arma::size(mask) != arma::size(x.value())) {
    throw Error(name + ": the mask is " + shape_str(mask.n_rows, mask.n_cols) + " but x is " + x.shape() +
                "; expected a mask of x's shape");
  }
  if (std::isnan(value)) throw Error(name + ": the value is NaN; expected a number or +-infinity");
  auto masked = std::make_shared<const arma::uvec>(arma::find(mask));
  // The Function's forward is what the per-node check replays: with an
  // infinite value its finite differences would be inf - inf = NaN, so it
  // fills 0 instead; the gradient there is 0 whatever the value.
  const double replayed = std::isfinite(value) ? value : 0.0;
  Function f{name,
             [masked, replayed](const Inputs& in) {
               arma::mat y = in[0];
               y.elem(*masked).fill(replayed);
               return y;
             },
             [masked](const Inputs&, const arma::mat&, const arma::mat& dout) {
               Grads dx(1, dout);  // one copy of dout, not two (Grads{dx} copies dx again)
               dx[0].elem(*masked).zeros();
               return dx;
             }};
  arma::mat y = x.value();
  y.elem(*masked).fill(value);
  if (t.anomaly_mode()) {  // a copy with the mask zeroed, made only when it is looked at
    arma::mat unmasked = y;
    unmasked.elem(*masked).zeros();
    if (!unmasked.is_finite()) {
      throw AnomalyError("anomaly: forward of '" + name + "' (" + x.shape() + ") produced NaN or inf outside its mask");
    }
  }
  AnomalyPause pause(t);
  Var out = record_function(t, def, std::move(f), {x}, std::move(y), masked->n_elem * sizeof(arma::uword),
                            unmasked_tangent(masked));
  t.set_attribute(out, "value", value);
  return out;
}

arma::umat causal_mask(arma::uword T) {
  arma::umat mask(T, T, arma::fill::zeros);
  for (arma::uword j = 1; j < T; ++j) mask.submat(0, j, arma::size(j, 1)).ones();  // rows i < j of column j
  return mask;
}

const OpDef& dropout_def() {
  static const OpDef def{"dropout", 1, "y = a * keep / (1 - p), keep = 1 with probability 1 - p, else 0",
                         "da = dy * keep / (1 - p)", "dy = da * keep / (1 - p)",
                         {}};  // its nodes carry their own rule, holding their keep-mask
  return def;
}
Var dropout(Var x, double p, Rng& rng, bool training) {
  const OpDef& def = dropout_def();
  Tape& t = tape_of(def.name, x);
  if (!(p >= 0 && p < 1)) {
    throw Error(std::string(def.name) + ": p = " + ag::format_number(p) + " for a " + x.shape() +
                " input; expected a drop probability in [0, 1) (p = 1 would drop everything)");
  }
  if (!training || p == 0) return x;
  arma::mat drawn(arma::size(x.value()));
  for (double& s : drawn) s = rng.uniform() < p ? 0.0 : 1.0 / (1.0 - p);
  auto scale = std::make_shared<const arma::mat>(std::move(drawn));
  Function f{def.name, [scale](const Inputs& in) { return arma::mat(in[0] % *scale); },
             [scale](const Inputs&, const arma::mat&, const arma::mat& dout) { return Grads{dout % *scale}; }};
  arma::mat y = x.value() % *scale;
  Var out = record_function(t, def, std::move(f), {x}, std::move(y), scale->n_elem * sizeof(double),
                            [scale](J j) { return j.dx[0] * j.tape.constant(*scale, "keep / (1 - p)"); });
  t.set_attribute(out, "p", p);
  return out;
}

}  // namespace ag
