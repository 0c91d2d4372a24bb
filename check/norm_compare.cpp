#include "check/norm_compare.h"

#include <cmath>
#include <limits>

#include "check/listing.h"
#include "ops/layernorm.h"

namespace ag {

namespace {

using LD = long double;
using Row = std::vector<LD>;

// y = (x - mean) / sqrt(var + eps) * gamma + beta for one row, two-pass, in long double.
// RMSNorm: y = x / sqrt(mean(x^2) + eps) * gamma. Returns the scale sqrt(var + eps).
LD forward_row(const Row& x, const Row& gamma, const Row& beta, LD eps, bool rms, Row& y) {
  const std::size_t D = x.size();
  LD mean = 0, var = 0;
  if (!rms) {
    for (LD v : x) mean += v;
    mean /= LD(D);
  }
  for (LD v : x) var += (v - mean) * (v - mean);
  const LD scale = std::sqrt(var / LD(D) + eps);
  y.resize(D);
  for (std::size_t j = 0; j < D; ++j) y[j] = (x[j] - mean) / scale * gamma[j] + (rms ? 0 : beta[j]);
  return scale;
}

struct Reference {
  const NormInputs& in;
  Row gamma, beta;

  Row row(arma::uword i) const {
    Row r(in.x.n_cols);
    for (arma::uword j = 0; j < in.x.n_cols; ++j) r[j] = in.x(i, j);
    return r;
  }
  // sum_j dy_ij y_ij: row i's share of the loss L = <dy, y>.
  LD loss_row(arma::uword i, const Row& x, const Row& g, const Row& b) const {
    Row y;
    forward_row(x, g, b, in.eps, in.rms, y);
    LD loss = 0;
    for (std::size_t j = 0; j < y.size(); ++j) loss += LD(in.dy(i, j)) * y[j];
    return loss;
  }
  LD loss(const Row& g, const Row& b) const {
    LD total = 0;
    for (arma::uword i = 0; i < in.x.n_rows; ++i) total += loss_row(i, row(i), g, b);
    return total;
  }
};

Row to_row(const arma::mat& m, arma::uword cols) {
  Row r(cols, 0);
  for (arma::uword j = 0; j < cols && j < m.n_elem; ++j) r[j] = m(j);
  return r;
}

// d f / d v at v0 by central differences with step h, plus one Richardson step:
// (4 D(h/2) - D(h)) / 3 cancels the h^2 error term.
template <typename F>
double derivative(F f, LD v0, LD h) {
  auto central = [&](LD step) { return (f(v0 + step) - f(v0 - step)) / (2 * step); };
  return double((4 * central(h / 2) - central(h)) / 3);
}

// How far a difference quotient of a loss with uncancelled size S (the sum
// of its terms' magnitudes) can be off from rounding alone, with step h: L is
// a long-double sum of D-term rows, each term a few operations, so it is good
// to about (D + 8) ulps of S; the Richardson combination of two central
// differences turns a rounding error delta into at most 3 delta / h.
LD rounding_resolution(LD S, LD h, std::size_t D) {
  return 3 * LD(D + 8) * std::numeric_limits<LD>::epsilon() * S / h;
}

// Row i's share of S: sum_j |dy_ij| (|gamma_j| (|x_ij| + |mean_i|) / scale_i + |beta_j|),
// a bound on sum_j |dy_ij y_ij| that also counts the rounding of x - mean.
LD loss_magnitude(const NormInputs& in, arma::uword i) {
  const arma::uword D = in.x.n_cols;
  LD mean = 0, var = 0;
  if (!in.rms) mean = LD(arma::mean(in.x.row(i)));
  for (arma::uword j = 0; j < D; ++j) var += (LD(in.x(i, j)) - mean) * (LD(in.x(i, j)) - mean);
  const LD scale = std::sqrt(var / LD(D) + LD(in.eps));
  LD S = 0;
  for (arma::uword j = 0; j < D; ++j) {
    const LD term = std::abs(LD(in.gamma(j))) * (std::abs(LD(in.x(i, j))) + std::abs(mean)) / scale +
                    (in.rms ? 0 : std::abs(LD(in.beta(j))));
    S += std::abs(LD(in.dy(i, j))) * term;
  }
  return S;
}

NormPath numeric_path(const NormInputs& in) {
  const arma::uword N = in.x.n_rows, D = in.x.n_cols;
  Reference ref{in, to_row(in.gamma, D), to_row(in.beta, D)};
  NormPath p;
  p.name = "numeric";
  p.ran = true;
  p.y = norm_reference(in);
  p.dx.set_size(N, D);
  p.dx_resolution.set_size(N, D);
  LD S = 0;  // the whole loss's
  for (arma::uword i = 0; i < N; ++i) {
    Row x = ref.row(i), y;
    const LD h = 1e-3L * forward_row(x, ref.gamma, ref.beta, in.eps, in.rms, y);  // a step on the row's scale
    const LD S_i = loss_magnitude(in, i);
    S += S_i;
    p.dx_resolution.row(i).fill(double(rounding_resolution(S_i, h, D)));
    for (arma::uword j = 0; j < D; ++j) {
      const LD x0 = x[j];
      p.dx(i, j) = derivative([&](LD v) { x[j] = v; LD l = ref.loss_row(i, x, ref.gamma, ref.beta); x[j] = x0; return l; }, x0, h);
    }
  }
  auto param_grad = [&](Row& param, arma::mat& res) {
    arma::mat g(1, D);
    res.set_size(1, D);
    for (arma::uword j = 0; j < D; ++j) {
      const LD p0 = param[j], h = 1e-3L * std::max<LD>(1, std::abs(p0));
      g(j) = derivative([&](LD v) { param[j] = v; LD l = ref.loss(ref.gamma, ref.beta); param[j] = p0; return l; },
                        p0, h);
      res(j) = double(rounding_resolution(S, h, D * N));
    }
    return g;
  };
  p.dgamma = param_grad(ref.gamma, p.dgamma_resolution);
  if (!in.rms) p.dbeta = param_grad(ref.beta, p.dbeta_resolution);
  return p;
}

NormPath tape_path(const NormInputs& in, bool fused) {
  Tape tape;
  Var x = tape.leaf(in.x, "x"), gamma = tape.leaf(in.gamma, "gamma");
  Var beta = in.rms ? Var{} : tape.leaf(in.beta, "beta");
  const std::size_t leaves = tape.size();
  Var y = in.rms ? (fused ? rmsnorm_fused(x, gamma, in.eps) : rmsnorm_composed(x, gamma, in.eps))
                 : (fused ? layernorm_fused(x, gamma, beta, in.eps) : layernorm_composed(x, gamma, beta, in.eps));
  NormPath p;
  p.name = fused ? "fused" : "composed";
  p.ran = true;
  p.nodes = tape.size() - leaves;
  p.saved_bytes = tape.saved_bytes();  // before backward frees them
  p.tape_listing = format_tape(tape);
  p.y = y.value();
  tape.backward(y, in.dy);
  p.dx = x.grad();
  p.dgamma = gamma.grad();
  if (!in.rms) p.dbeta = beta.grad();
  return p;
}

// The resolutions of both paths (empty: none) added, shaped like m.
arma::mat allowance(const arma::mat& m, const arma::mat& ra, const arma::mat& rb) {
  arma::mat r(arma::size(m), arma::fill::zeros);
  if (arma::size(ra) == arma::size(m)) r += ra;
  if (arma::size(rb) == arma::size(m)) r += rb;
  return r;
}

NormDiff diff(const std::string& quantity, const NormPath& a, const NormPath& b, const arma::mat& ma,
              const arma::mat& mb, const arma::mat& resolution) {
  NormDiff d{quantity, a.name, b.name};
  if (ma.n_elem == 0 || ma.n_elem != mb.n_elem) return d;
  const arma::mat gap = arma::abs(ma - mb);
  d.max_abs = gap.max();
  d.scale = std::max(arma::abs(ma).max(), arma::abs(mb).max());
  d.max_rel = d.scale > 0 ? d.max_abs / d.scale : 0.0;
  d.resolution = resolution.max();
  d.agrees = arma::all(arma::vectorise(gap <= std::max(1e-6 * d.scale, 1e-9) + resolution));  // NaN disagrees
  return d;
}

}  // namespace

std::vector<NormDiff> compare_paths(const NormPath& a, const NormPath& b, bool rms) {
  std::vector<NormDiff> out;
  out.push_back(diff("y", a, b, a.y, b.y, arma::zeros(arma::size(a.y))));
  out.push_back(diff("dx", a, b, a.dx, b.dx, allowance(a.dx, a.dx_resolution, b.dx_resolution)));
  out.push_back(diff("dgamma", a, b, a.dgamma, b.dgamma, allowance(a.dgamma, a.dgamma_resolution, b.dgamma_resolution)));
  if (!rms) out.push_back(diff("dbeta", a, b, a.dbeta, b.dbeta, allowance(a.dbeta, a.dbeta_resolution, b.dbeta_resolution)));
  return out;
}

namespace {

void add_diffs(std::vector<NormDiff>& out, const NormPath& a, const NormPath& b, bool rms) {
  for (NormDiff& d : compare_paths(a, b, rms)) out.push_back(std::move(d));
}

}  // namespace

arma::mat norm_reference(const NormInputs& in) {
  const arma::uword N = in.x.n_rows, D = in.x.n_cols;
  Reference ref{in, to_row(in.gamma, D), to_row(in.beta, D)};
  arma::mat y(N, D);
  for (arma::uword i = 0; i < N; ++i) {
    Row yi;
    forward_row(ref.row(i), ref.gamma, ref.beta, in.eps, in.rms, yi);
    for (arma::uword j = 0; j < D; ++j) y(i, j) = double(yi[j]);
  }
  return y;
}

double NormComparison::worst_rel(const std::string& a, const std::string& b) const {
  double worst = 0;
  for (const NormDiff& d : diffs) {
    if (d.a == a && d.b == b) worst = std::max(worst, d.max_rel);
  }
  return worst;
}

NormComparison compare_norm(const NormInputs& in, bool finite_differences) {
  if (in.dy.n_rows != in.x.n_rows || in.dy.n_cols != in.x.n_cols) {
    throw Error(std::string(in.rms ? "rmsnorm" : "layernorm") + " comparison: the output gradient dy is " +
                shape_str(in.dy) + " but x is " + shape_str(in.x) + "; they must match");
  }
  NormComparison c;
  c.composed = tape_path(in, false);  // validates shapes and eps first
  c.fused = tape_path(in, true);
  add_diffs(c.diffs, c.composed, c.fused, in.rms);
  if (finite_differences) {
    c.numeric = numeric_path(in);
    add_diffs(c.diffs, c.composed, c.numeric, in.rms);
    add_diffs(c.diffs, c.fused, c.numeric, in.rms);
  } else {
    c.numeric.name = "numeric";
  }
  return c;
}

}  // namespace ag
