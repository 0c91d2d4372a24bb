#include <algorithm>
#include <cmath>
#include <string>

#include "autograd/gradcheck.h"
#include "autograd/tape.h"
#include "ops/ops.h"
#include "page/views.h"

namespace page {

namespace {

constexpr arma::uword kMaxJacobian = 64;  // D x D numbers: 4096 at most on every keystroke

struct Grads {
  arma::mat dx, dgamma, dbeta;
  std::size_t saved_bytes = 0;
};

// The composed LayerNorm of one row, as the tape records it: every node with its value and gradient.
Grads composed(const Request& r, const arma::mat& x, Report& report) {
  ag::Tape t;
  t.set_anomaly_mode(true);
  ag::Var vx = t.leaf(x, "x"), vg = t.leaf(r.gamma, "gamma"), vb = t.leaf(r.beta, "beta");
  ag::Var y = ag::layernorm_composed(vx, vg, vb, r.eps);
  Grads g;
  g.saved_bytes = t.saved_bytes();  // before backward releases what the closures hold
  t.backward(y, r.dy, true);
  for (std::size_t k = 0; k < t.size(); ++k) {
    const ag::Node& n = t.node(k);
    const std::string key = "tape." + std::to_string(k);
    report.tape.push_back({key, ag::op_label(n), n.inputs});
    report.put(key + ".v", n.value, ag::op_label(n));
    report.put(key + ".g", n.grad.is_empty() ? arma::mat(arma::size(n.value), arma::fill::zeros) : n.grad);
  }
  g.dx = vx.grad();
  g.dgamma = vg.grad();
  g.dbeta = vb.grad();
  return g;
}

Grads fused(const Request& r, const arma::mat& x, const arma::mat& dy) {
  ag::Tape t;
  t.set_anomaly_mode(true);
  ag::Var vx = t.leaf(x, "x"), vg = t.leaf(r.gamma, "gamma"), vb = t.leaf(r.beta, "beta");
  ag::Var y = ag::layernorm_fused(vx, vg, vb, r.eps);
  Grads g;
  g.saved_bytes = t.saved_bytes();
  t.backward(y, dy);
  g.dx = vx.grad();
  g.dgamma = vg.grad();
  g.dbeta = vb.grad();
  return g;
}

// Central differences of L = <dy, y> in x, through the fused forward: 2 d
// forwards of d numbers each, so skipped (with a note) for a long row.
void finite_differences(const Request& r, const arma::mat& x, const arma::mat& dx, Report& report) {
  if (x.n_cols > kMaxFiniteDifferences) {
    report.errors["fd"] = "finite differences are skipped above " + std::to_string(kMaxFiniteDifferences) +
                          " features (they take 2·d forwards of d numbers); this row has " + std::to_string(x.n_cols);
    return;
  }
  const ag::ScalarFunction loss = [&](const std::vector<arma::mat>& in) {
    ag::Tape t;
    return arma::accu(r.dy % ag::layernorm_fused(t.constant(in[0]), t.constant(r.gamma), t.constant(r.beta), r.eps).value());
  };
  const arma::mat numeric = ag::numeric_gradient(loss, {x}, 0);
  report.put("fd.dx", numeric, "dx by central differences (h = 1e-6)");
  report.put("fd.err", arma::abs(numeric - dx).max(), "largest |tape - finite difference|");
}

// Rank by Gaussian elimination with full pivoting (Armadillo's rank() needs
// LAPACK, which the WebAssembly build has not): pivots below tol count as zero.
arma::uword rank_of(arma::mat a, double tol) {
  arma::uword rank = 0;
  for (; rank < std::min(a.n_rows, a.n_cols); ++rank) {
    arma::mat rest = arma::abs(a.submat(rank, rank, a.n_rows - 1, a.n_cols - 1));
    const arma::uword at = rest.index_max();
    const arma::uword pr = rank + at % rest.n_rows, pc = rank + at / rest.n_rows;
    if (rest(at) <= tol) break;
    a.swap_rows(rank, pr);
    a.swap_cols(rank, pc);
    for (arma::uword i = rank + 1; i < a.n_rows; ++i) a.row(i) -= a(i, rank) / a(rank, rank) * a.row(rank);
  }
  return rank;
}

// J(i, j) = dy_i / dx_j: one fused backward per output, with dy = e_i.
void jacobian(const Request& r, const arma::mat& x, Report& report) {
  const arma::uword D = x.n_cols;
  arma::mat J(D, D);
  for (arma::uword i = 0; i < D; ++i) {
    arma::mat e(1, D, arma::fill::zeros);
    e(i) = 1;
    J.row(i) = fused(r, x, e).dx;
  }
  const double tol = static_cast<double>(D) * arma::datum::eps * std::max(1.0, arma::abs(J).max());
  const arma::vec ones(D, arma::fill::ones);
  report.put("jac", J, "Jacobian dy_i/dx_j");
  report.put("jac.rank", static_cast<double>(rank_of(J, tol)), "rank");
  report.put("jac.ones", arma::abs(J * ones).max(), "max |J 1|: the direction (1, ..., 1) is lost");
  // x̂'s own direction is kept, but shrunk: J x̂ = (gamma / std) * eps / (var + eps) * x̂ for one gamma.
  const arma::rowvec centred = x - arma::mean(arma::vectorise(x));
  const arma::vec xhat = arma::trans(centred / std::sqrt(arma::var(centred, 1) + r.eps));  // var over D, not D - 1
  if (arma::norm(xhat) > 0) report.put("jac.xhat", arma::norm(J * xhat) / arma::norm(xhat), "|J x̂| / |x̂|");
}

}  // namespace

void backward_views(const Request& r, Report& report) {
  try {
    const arma::mat x = r.x.row(0);
    report.put("dy", r.dy, r.dy_default ? "the default: dy of L = Σ_j j·y_j" : "dy, typed");
    const Grads c = composed(r, x, report);
    const Grads f = fused(r, x, r.dy);
    report.put("composed.dx", c.dx, "dx");
    report.put("composed.dgamma", c.dgamma, "dgamma");
    report.put("composed.dbeta", c.dbeta, "dbeta");
    report.put("fused.dx", f.dx, "dx");
    report.put("fused.dgamma", f.dgamma, "dgamma");
    report.put("fused.dbeta", f.dbeta, "dbeta");
    report.put("maxdiff", std::max({arma::abs(c.dx - f.dx).max(), arma::abs(c.dgamma - f.dgamma).max(),
                                    arma::abs(c.dbeta - f.dbeta).max()}), "largest |composed - fused|");
    report.put("saved.composed", static_cast<double>(c.saved_bytes), "bytes saved for backward, composed");
    report.put("saved.fused", static_cast<double>(f.saved_bytes), "bytes saved for backward, fused");
    finite_differences(r, x, c.dx, report);
    if (x.n_cols <= kMaxJacobian) {
      jacobian(r, x, report);
    } else {
      report.errors["jac"] = "the Jacobian is drawn for up to " + std::to_string(kMaxJacobian) +
                             " features; this row has " + std::to_string(x.n_cols);
    }
  } catch (const ag::AnomalyError& e) {
    report.errors["backward"] = std::string("the numbers overflow a double: ") + e.what();
  } catch (const std::exception& e) {
    report.errors["backward"] = e.what();
  }
}

}  // namespace page
