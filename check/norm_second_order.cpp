#include "check/norm_second_order.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "autograd/rng.h"
#include "check/forward_check.h"
#include "ops/functional.h"
#include "ops/ops.h"

namespace ag {

namespace {

// L = <dy, norm(x, gamma, beta)>, through one path.
TapeFunction norm_loss(const NormInputs& in, bool fused) {
  return [in, fused](Tape& tape, const std::vector<Var>& p) {
    Var y = in.rms ? (fused ? rmsnorm_fused(p[0], p[1], in.eps) : rmsnorm_composed(p[0], p[1], in.eps))
                   : (fused ? layernorm_fused(p[0], p[1], p[2], in.eps)
                            : layernorm_composed(p[0], p[1], p[2], in.eps));
    return sum(mul(y, tape.constant(in.dy, "dy")));
  };
}

TapeFunction norm_output(const NormInputs& in) {
  return [in](Tape&, const std::vector<Var>& p) {
    return in.rms ? rmsnorm_fused(p[0], p[1], in.eps) : layernorm_fused(p[0], p[1], p[2], in.eps);
  };
}

double rel(const arma::vec& a, const arma::vec& b) {
  const double scale = std::max(arma::abs(a).max(), arma::abs(b).max());
  return scale > 0 ? arma::abs(a - b).max() / scale : 0.0;
}

// A random direction scaled to each input's own scale, so that one relative
// step fits them all: row r of v_x by sqrt(var_r + eps) (RMSNorm: sqrt(mean
// square + eps)), the scale on which a row's norm bends; v_gamma and v_beta by
// their largest magnitude (at least 1). An absolute step of 1e-5 was all
// truncation for rows of size 1e-3 and all rounding for rows of size 1e6.
std::vector<arma::mat> scaled_direction(const NormInputs& in, const std::vector<arma::mat>& p, Rng& rng) {
  std::vector<arma::mat> v;
  for (const arma::mat& m : p) v.push_back(rng.uniform(m.n_rows, m.n_cols, -1.0, 1.0));
  for (arma::uword r = 0; r < in.x.n_rows; ++r) {
    const arma::rowvec row = in.x.row(r);
    const double spread = in.rms ? arma::mean(arma::square(row)) : arma::var(row, 1);  // biased, as the norm's
    v[0].row(r) *= std::sqrt(spread + in.eps);
  }
  for (std::size_t k = 1; k < p.size(); ++k) v[k] *= std::max(1.0, arma::abs(p[k]).max());
  return v;
}

}  // namespace

std::string NormHvp::disagreement() const {
  struct Pair {
    const char* name;
    double rel, allowed;
  };
  for (const Pair& pair : {Pair{"composed vs fused", composed_fused_rel, kComposedFused},
                           Pair{"composed vs numeric", composed_numeric_rel, kNumeric},
                           Pair{"fused vs numeric", fused_numeric_rel, kNumeric},
                           Pair{"the fused transpose identity", transpose_rel, kTranspose}}) {
    if (!(pair.rel <= pair.allowed)) {  // NaN disagrees
      std::ostringstream os;
      os.precision(3);
      os << pair.name << " (max rel " << pair.rel << ", allowed " << pair.allowed << ")";
      return os.str();
    }
  }
  return "";
}

NormHvp compare_norm_hvp(const NormInputs& in, std::uint64_t seed) {
  std::vector<arma::mat> p = {in.x, in.gamma};
  if (!in.rms) p.push_back(in.beta);
  Rng rng(seed);
  const std::vector<arma::mat> v = scaled_direction(in, p, rng);
  NormHvp r;
  r.composed = flatten(hvp(norm_loss(in, false), p, v));
  r.fused = flatten(hvp(norm_loss(in, true), p, v));
  const double eps = 1e-5;  // relative: v carries each input's scale
  const arma::mat one(1, 1, arma::fill::ones);
  const MatrixFunction gradient = [&](const std::vector<arma::mat>& x) {
    return arma::mat(flatten(vjp(norm_loss(in, false), x, one).cotangents));
  };
  r.numeric = directional_difference(gradient, p, v, eps);
  r.composed_fused_rel = rel(r.composed, r.fused);
  r.composed_numeric_rel = rel(r.composed, r.numeric);
  r.fused_numeric_rel = rel(r.fused, r.numeric);
  r.transpose_rel = transpose_identity(norm_output(in), p, seed, 1.0).rel_error;
  return r;
}

}  // namespace ag
