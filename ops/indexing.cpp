#include "ops/indexing.h"

#include <cmath>
#include <sstream>
#include <string>

#include "autograd/custom_op.h"

namespace ag {

namespace {

std::string num(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

// embedding, masked_fill and dropout depend on a tensor that is not an input
// (indices, a mask, a drawn keep-mask). Their node keeps its forward as a
// Function, so the per-node check (check/node_check.h) replays it with that
// tensor; the op-table row could only replay the tensor its own cases use.
// Saved: the tensor the closures hold, no input value (only their shapes).
Var record_function(Tape& t, Function f, const std::vector<Var>& inputs, arma::mat y, std::size_t extra_bytes) {
  std::string op = f.name;
  return t.record(std::move(op), inputs, std::move(y), CustomBackward{std::move(f)}, Saved{{}, false, extra_bytes});
}

// The `count` rows (or columns) from `first` on must exist; no overflow in first + count.
void check_block(const char* op, const char* what, const arma::mat& x, arma::uword first, arma::uword count) {
  const arma::uword n = op[0] == 'r' ? x.n_rows : x.n_cols;
  if (count <= n && first <= n - count) return;
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

}  // namespace

// out.row(i) = table.row(indices(i));  dtable.row(indices(i)) += dout.row(i)
Var embedding(Var table, const arma::uvec& indices) {
  Tape& t = tape_of("embedding", table);
  const arma::mat& w = table.value();
  for (arma::uword i = 0; i < indices.n_elem; ++i) {
    if (indices(i) >= w.n_rows) {
      throw Error("embedding: index " + std::to_string(indices(i)) + " (position " + std::to_string(i) +
                  ") is out of range for a " + shape_str(w) + " table; expected indices below " +
                  std::to_string(w.n_rows));
    }
  }
  Function f{"embedding", [indices](const Inputs& in) { return arma::mat(in[0].rows(indices)); },
             [indices](const Inputs& in, const arma::mat&, const arma::mat& dout) {
               arma::mat dtable(arma::size(in[0]), arma::fill::zeros);
               if (dtable.n_cols == 0) return Grads{dtable};  // rows of nothing: Armadillo's row += would read null
               for (arma::uword i = 0; i < indices.n_elem; ++i) dtable.row(indices(i)) += dout.row(i);
               return Grads{dtable};
             }};
  arma::mat y = w.rows(indices);
  return record_function(t, std::move(f), {table}, std::move(y), 2 * indices.n_elem * sizeof(arma::uword));
}

// y = x.rows(first, first + count - 1);  dx = dy in that block, 0 elsewhere
Var rows(Var x, arma::uword first, arma::uword count) {
  Tape& t = tape_of("rows", x);
  const arma::mat& v = x.value();
  check_block("rows", "rows", v, first, count);
  Var y = t.record("rows", {x}, block(v, first, 0, arma::size(count, v.n_cols)),
                   [first, shape = arma::size(v)](Tape& t, const Node& n) {
                     arma::mat dx(shape, arma::fill::zeros);
                     put_block(dx, first, 0, n.grad);
                     t.accumulate(n.inputs[0], std::move(dx));
                   });
  t.set_attribute(y, "first", double(first));
  t.set_attribute(y, "count", double(count));
  return y;
}

// y = x.cols(first, first + count - 1);  dx = dy in that block, 0 elsewhere
Var cols(Var x, arma::uword first, arma::uword count) {
  Tape& t = tape_of("cols", x);
  const arma::mat& v = x.value();
  check_block("cols", "columns", v, first, count);
  Var y = t.record("cols", {x}, block(v, 0, first, arma::size(v.n_rows, count)),
                   [first, shape = arma::size(v)](Tape& t, const Node& n) {
                     arma::mat dx(shape, arma::fill::zeros);
                     put_block(dx, 0, first, n.grad);
                     t.accumulate(n.inputs[0], std::move(dx));
                   });
  t.set_attribute(y, "first", double(first));
  t.set_attribute(y, "count", double(count));
  return y;
}

// y = [a b ...] side by side;  da = dy's columns where a sits, and so on
Var hcat(const std::vector<Var>& parts) {
  if (parts.empty()) throw Error("hcat: no parts to join (an empty list); expected at least one Var");
  Tape& t = tape_of("hcat", parts[0]);
  check_parts("hcat", t, parts);
  const arma::uword n_rows = parts[0].rows();
  std::vector<arma::uword> first;  // where each part's columns start in y
  arma::uword width = 0;
  for (std::size_t k = 0; k < parts.size(); ++k) {
    if (parts[k].rows() != n_rows) {
      throw Error("hcat: part " + std::to_string(k) + " is " + parts[k].shape() + " but part 0 is " +
                  parts[0].shape() + "; side by side, every part needs " + std::to_string(n_rows) + " rows");
    }
    first.push_back(width);
    width += parts[k].cols();
  }
  arma::mat y(n_rows, width);
  for (std::size_t k = 0; k < parts.size(); ++k) put_block(y, 0, first[k], parts[k].value());
  return t.record("hcat", parts, std::move(y), [first](Tape& t, const Node& n) {
    for (std::size_t k = 0; k < n.inputs.size(); ++k) {
      const arma::uword end = k + 1 < first.size() ? first[k + 1] : n.grad.n_cols;
      t.accumulate(n.inputs[k], block(n.grad, 0, first[k], arma::size(n.grad.n_rows, end - first[k])));
    }
  });
}

// y = [a; b; ...] stacked;  da = dy's rows where a sits, and so on
Var vcat(const std::vector<Var>& parts) {
  if (parts.empty()) throw Error("vcat: no parts to join (an empty list); expected at least one Var");
  Tape& t = tape_of("vcat", parts[0]);
  check_parts("vcat", t, parts);
  const arma::uword n_cols = parts[0].cols();
  std::vector<arma::uword> first;  // where each part's rows start in y
  arma::uword height = 0;
  for (std::size_t k = 0; k < parts.size(); ++k) {
    if (parts[k].cols() != n_cols) {
      throw Error("vcat: part " + std::to_string(k) + " is " + parts[k].shape() + " but part 0 is " +
                  parts[0].shape() + "; stacked, every part needs " + std::to_string(n_cols) + " columns");
    }
    first.push_back(height);
    height += parts[k].rows();
  }
  arma::mat y(height, n_cols);
  for (std::size_t k = 0; k < parts.size(); ++k) put_block(y, first[k], 0, parts[k].value());
  return t.record("vcat", parts, std::move(y), [first](Tape& t, const Node& n) {
    for (std::size_t k = 0; k < n.inputs.size(); ++k) {
      const arma::uword end = k + 1 < first.size() ? first[k + 1] : n.grad.n_rows;
      t.accumulate(n.inputs[k], block(n.grad, first[k], 0, arma::size(end - first[k], n.grad.n_cols)));
    }
  });
}

// ---- masking and dropout ------------------------------------------------------

namespace {
// Anomaly mode reports every inf a node produces; the -inf a masked_fill writes
// where its mask says is what the caller asked for (a causal mask). So the
// node's other entries are checked here and it is recorded with the tape's
// check paused, restored however record returns.
class AnomalyPause {
 public:
  explicit AnomalyPause(Tape& t) : t_(t), previous_(t.anomaly_mode()) { t_.set_anomaly_mode(false); }
  ~AnomalyPause() { t_.set_anomaly_mode(previous_); }
  AnomalyPause(const AnomalyPause&) = delete;
  AnomalyPause& operator=(const AnomalyPause&) = delete;

 private:
  Tape& t_;
  bool previous_;
};
}  // namespace

// y = value where mask != 0, x elsewhere;  dx = dy where mask == 0, 0 where it is not
Var masked_fill(Var x, const arma::umat& mask, double value) {
  Tape& t = tape_of("masked_fill", x);
  if (arma::size(mask) != arma::size(x.value())) {
    throw Error("masked_fill: the mask is " + shape_str(mask.n_rows, mask.n_cols) + " but x is " + x.shape() +
                "; expected a mask of x's shape");
  }
  if (std::isnan(value)) throw Error("masked_fill: the value is NaN; expected a number or +-infinity");
  const arma::uvec masked = arma::find(mask);
  // The Function's forward is what the per-node check replays: with an
  // infinite value its finite differences would be inf - inf = NaN, so it
  // fills 0 instead; the gradient there is 0 whatever the value.
  const double replayed = std::isfinite(value) ? value : 0.0;
  Function f{"masked_fill",
             [masked, replayed](const Inputs& in) {
               arma::mat y = in[0];
               y.elem(masked).fill(replayed);
               return y;
             },
             [masked](const Inputs&, const arma::mat&, const arma::mat& dout) {
               arma::mat dx = dout;
               dx.elem(masked).zeros();
               return Grads{dx};
             }};
  arma::mat y = x.value();
  y.elem(masked).fill(value);
  arma::mat unmasked = y;
  unmasked.elem(masked).zeros();
  if (t.anomaly_mode() && !unmasked.is_finite()) {
    throw AnomalyError("anomaly: forward of 'masked_fill' (" + x.shape() + ") produced NaN or inf outside its mask");
  }
  AnomalyPause pause(t);
  Var out = record_function(t, std::move(f), {x}, std::move(y), 2 * masked.n_elem * sizeof(arma::uword));
  t.set_attribute(out, "value", value);
  return out;
}

arma::umat causal_mask(arma::uword T) {
  arma::umat mask(T, T, arma::fill::zeros);
  for (arma::uword j = 1; j < T; ++j) mask.submat(0, j, arma::size(j, 1)).ones();  // rows i < j of column j
  return mask;
}

// y = x * keep / (1 - p), keep(i, j) = 1 with probability 1 - p;  dx = dy * keep / (1 - p)
Var dropout(Var x, double p, Rng& rng, bool training) {
  Tape& t = tape_of("dropout", x);
  if (!(p >= 0 && p < 1)) {
    throw Error("dropout: p = " + num(p) + " for a " + x.shape() +
                " input; expected a drop probability in [0, 1) (p = 1 would drop everything)");
  }
  if (!training || p == 0) return x;
  arma::mat scale(arma::size(x.value()));
  for (double& s : scale) s = rng.uniform() < p ? 0.0 : 1.0 / (1.0 - p);
  Function f{"dropout", [scale](const Inputs& in) { return arma::mat(in[0] % scale); },
             [scale](const Inputs&, const arma::mat&, const arma::mat& dout) { return Grads{dout % scale}; }};
  arma::mat y = x.value() % scale;
  Var out = record_function(t, std::move(f), {x}, std::move(y), 2 * scale.n_elem * sizeof(double));
  t.set_attribute(out, "p", p);
  return out;
}

}  // namespace ag
