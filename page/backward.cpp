#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>

#include "autograd/gradcheck.h"
#include "autograd/tape.h"
#include "check/node_check.h"
#include "ops/functional.h"
#include "ops/ops.h"
#include "page/views.h"

namespace page {

namespace {

constexpr arma::uword kMaxJacobian = 64;  // D x D numbers: 4096 at most on every keystroke

struct Grads {
  arma::mat dx, dgamma, dbeta;
  std::size_t saved_bytes = 0;
  std::map<std::string, std::pair<std::size_t, arma::mat>> into_x;  // op -> (node, what it adds into x's gradient)
};

// One step of the backward walk: what node n's backward alone adds into each
// input's gradient (tape.K.into.I), from its gradient and the values it saw.
ag::Grads walk_step(const ag::Tape& t, const ag::Node& n, const std::string& key, Report& report) {
  ag::Inputs inputs;
  for (std::size_t in : n.inputs) inputs.push_back(t.value(in));
  const ag::Grads parts = ag::node_backward_alone(n, inputs, n.grad);
  for (std::size_t k = 0; k < n.inputs.size(); ++k) {
    if (!t.node(n.inputs[k]).requires_grad) continue;
    report.put(key + ".into." + std::to_string(n.inputs[k]), parts[k], "added into node " + std::to_string(n.inputs[k]) + "'s gradient");
  }
  return parts;
}

// dx in the three terms lesson 04 and the exercise write, for one row:
//   dxhat = dy * gamma;  dx = rstd * dxhat - rstd * mean(dxhat) - rstd * xhat * mean(dxhat * xhat)
// Their sum against the fused node's dx shows the split is the backward.
void three_terms(const Request& r, const arma::mat& x, const arma::mat& fused_dx, const Grads& composed, Report& report) {
  const double mu = arma::mean(arma::vectorise(x));
  const double rstd = 1.0 / std::sqrt(arma::mean(arma::square(arma::vectorise(x) - mu)) + r.eps);
  const arma::rowvec xhat = (x - mu) * rstd;
  const arma::rowvec dxhat = r.dy % r.gamma;
  const double dxhat_mean = arma::mean(dxhat), dxhat_xhat_mean = arma::mean(dxhat % xhat);
  const arma::rowvec t1 = rstd * dxhat;
  const arma::rowvec t2(x.n_cols, arma::fill::value(-rstd * dxhat_mean));
  const arma::rowvec t3 = -rstd * dxhat_xhat_mean * xhat;
  report.put("terms.dxhat", dxhat, "dxhat = dy * gamma");
  report.put("terms.dxhat_mean", dxhat_mean, "mean(dxhat)");
  report.put("terms.dxhat_xhat_mean", dxhat_xhat_mean, "mean(dxhat * xhat)");
  report.put("terms.1", t1, "rstd * dxhat");
  report.put("terms.2", t2, "- rstd * mean(dxhat): the same for every feature");
  report.put("terms.3", t3, "- rstd * xhat * mean(dxhat * xhat)");
  report.put("terms.sum", t1 + t2 + t3, "the three terms added");
  report.put("terms.err", arma::abs(t1 + t2 + t3 - fused_dx).max(), "largest |three terms - fused dx|");
  // Each term is one path from x on the composed tape: x - mean (sub), mean, var.
  double paths = 0;
  const std::pair<const char*, const arma::rowvec*> path[] = {{"sub", &t1}, {"mean(dim=1)", &t2}, {"var(dim=1)", &t3}};
  for (int k = 0; k < 3; ++k) {
    const auto it = composed.into_x.find(path[k].first);
    if (it == composed.into_x.end()) throw std::logic_error(std::string("the composed tape has no ") + path[k].first + " node reading x");
    report.put("terms." + std::to_string(k + 1) + ".node", static_cast<double>(it->second.first), "the node whose backward adds it into x");
    paths = std::max(paths, arma::abs(*path[k].second - it->second.second).max());
  }
  report.put("terms.paths", paths, "largest |term - what its node adds into x|");
}

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
    report.tape.push_back({key, ag::op_label(n), n.inputs, n.def ? n.def->backward : ""});
    report.put(key + ".v", n.value, ag::op_label(n));
    report.put(key + ".g", n.grad.is_empty() ? arma::mat(arma::size(n.value), arma::fill::zeros) : n.grad);
    if (!n.backward || n.grad.is_empty()) continue;
    const ag::Grads parts = walk_step(t, n, key, report);
    for (std::size_t i = 0; i < n.inputs.size(); ++i) {
      if (n.inputs[i] == vx.id) g.into_x[n.op] = {k, parts[i]};
    }
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
// rows of d numbers each, so skipped (with a note) for a long row. The
// perturbed rows go through the forward a block at a time (one tape and one
// kernel call per 128 rows, not per row: the kernel's per-row numbers are
// the plain loop's at any number of rows, tests/test_norm_kernels.cpp), and
// each row's L adds its terms in column order, the same at any SIMD width.
void finite_differences(const Request& r, const arma::mat& x, const arma::mat& dx, Report& report) {
  if (x.n_cols > kMaxFiniteDifferences) {
    report.errors["fd"] = "finite differences are skipped above " + std::to_string(kMaxFiniteDifferences) +
                          " features (they take 2·d forwards of d numbers); this row has " + std::to_string(x.n_cols);
    return;
  }
  const ag::RowsFunction losses = [&](const arma::mat& rows) {
    ag::Tape t;
    const arma::mat& y = ag::layernorm_fused(t.constant(rows), t.constant(r.gamma), t.constant(r.beta), r.eps).value();
    arma::vec loss(rows.n_rows, arma::fill::zeros);
    for (arma::uword j = 0; j < y.n_cols; ++j) loss += r.dy(j) * y.col(j);
    return loss;
  };
  const arma::mat numeric = ag::numeric_gradient_rows(losses, x);
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

// J(i, j) = dy_i / dx_j of the fused LayerNorm: one backward per output (reverse mode).
void jacobian(const Request& r, const arma::mat& x, Report& report) {
  const arma::uword D = x.n_cols;
  const ag::TapeFunction layernorm = [&](ag::Tape& t, const std::vector<ag::Var>& in) {
    return ag::layernorm_fused(in[0], t.constant(r.gamma), t.constant(r.beta), r.eps);
  };
  const arma::mat J = ag::jacobian(layernorm, {x}, ag::Mode::Reverse).matrix;
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
    three_terms(r, x, f.dx, c, report);
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
