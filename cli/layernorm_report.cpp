#include "cli/layernorm_report.h"

#include <iomanip>
#include <iostream>
#include <sstream>
#include <vector>

namespace cli::norm_report {

std::string num(double v, int precision) {
  std::ostringstream os;
  os << std::setprecision(precision) << v;
  return os.str();
}

std::string row_str(const arma::mat& m, arma::uword r, int precision) {
  if (m.n_cols == 1) return num(m(r, 0), precision);
  std::string s = "[";
  for (arma::uword c = 0; c < m.n_cols; ++c) s += (c ? ", " : "") + num(m(r, c), precision);
  return s + "]";
}

std::string matrix_str(const arma::mat& m, int precision, const std::string& indent) {
  std::string s;
  for (arma::uword r = 0; r < m.n_rows; ++r) s += indent + row_str(m, r, precision) + "\n";
  return s;
}

void print_comparison(const ag::NormComparison& c, bool rms, int p) {
  std::cout << "\nbackward: dL/dx, dL/dgamma" << (rms ? "" : ", dL/dbeta") << " for L = sum(dy * y)\n";
  const std::vector<const ag::NormPath*> paths = {&c.composed, &c.fused, &c.numeric};
  auto show = [&](const char* name, arma::mat ag::NormPath::*field) {
    std::cout << name << "\n";
    for (const ag::NormPath* path : paths) {
      if (!path->ran) continue;
      std::cout << "  " << path->name << ":\n" << matrix_str(path->*field, p, "    ");
    }
  };
  show("dx", &ag::NormPath::dx);
  show("dgamma", &ag::NormPath::dgamma);
  if (!rms) show("dbeta", &ag::NormPath::dbeta);
  if (!c.numeric.ran) std::cout << "(finite differences skipped: the input is large; they cost O(N D^2))\n";
  std::cout << "\nlargest differences          max abs      max rel\n";
  for (const ag::NormDiff& d : c.diffs) {
    std::cout << "  " << std::left << std::setw(7) << d.quantity << std::setw(20) << (d.a + " vs " + d.b)
              << std::setw(13) << num(d.max_abs, 3) << num(d.max_rel, 3) << "\n";
  }
  for (const ag::NormDiff& d : c.diffs) {
    if (d.a != "composed" || d.b != "numeric" || d.resolution <= 1e-6 * d.scale) continue;
    std::cout << "(numeric " << d.quantity << " resolves only to " << num(d.resolution, 3)
              << " here: L's own rounding over the finite difference's step; the comparison allows for it)\n";
  }
}

void print_tapes(const ag::NormComparison& c, bool rms) {
  const char* name = rms ? "RMSNorm" : "LayerNorm";
  std::cout << "\nthe tape, composed: " << c.composed.nodes << " nodes from primitives (after the leaves)\n"
            << (rms ? "  (the steps above: x^2, its row mean, + eps, sqrt, x / rms, * gamma)\n"
                    : "  (the steps above, in the tutorials' order: mean, var (biased), x - mean, + eps, sqrt,\n"
                      "   (x - mean) / std, * gamma, + beta)\n")
            << c.composed.tape_listing << "\nthe tape, fused: " << c.fused.nodes << " node\n"
            << c.fused.tape_listing << "\nbytes held for backward: composed " << c.composed.saved_bytes
            << ", fused " << c.fused.saved_bytes << "\n  (fused " << name
            << " keeps references to x and gamma plus " << (rms ? "rstd" : "mean and rstd")
            << " per row; composed keeps every intermediate its primitives need)\n";
}

std::string output_csv(const ag::NormComparison& c, bool rms) {
  std::ostringstream os;
  os << std::setprecision(17) << "quantity,path,row,column,value\n";
  auto put = [&](const char* quantity, const ag::NormPath& p, const arma::mat& m) {
    for (arma::uword r = 0; r < m.n_rows; ++r) {
      for (arma::uword col = 0; col < m.n_cols; ++col) {
        os << quantity << "," << p.name << "," << r + 1 << "," << col + 1 << "," << m(r, col) << "\n";
      }
    }
  };
  for (const ag::NormPath* p : {&c.composed, &c.fused, &c.numeric}) {
    if (!p->ran) continue;
    put("y", *p, p->y);
    put("dx", *p, p->dx);
    put("dgamma", *p, p->dgamma);
    if (!rms) put("dbeta", *p, p->dbeta);
  }
  return os.str();
}

void print_second_order(const ag::NormHvp& h, bool rms) {
  std::cout << "\nsecond order: H v of L along a random direction (v_x, v_gamma" << (rms ? "" : ", v_beta")
            << "), reverse-over-forward\n"
            << "  composed vs fused          max rel " << num(h.composed_fused_rel, 3) << "\n"
            << "  composed vs numeric        max rel " << num(h.composed_numeric_rel, 3) << "\n"
            << "  fused vs numeric           max rel " << num(h.fused_numeric_rel, 3) << "\n"
            << "  fused transpose identity   rel " << num(h.transpose_rel, 3)
            << "  (<u, J v> forward vs <J^T u, v> reverse)\n";
}

}  // namespace cli::norm_report
