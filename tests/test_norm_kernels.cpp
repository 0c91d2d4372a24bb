// The fused LayerNorm and RMSNorm kernels (ops/norm_kernels.cpp), through
// layernorm_fused and rmsnorm_fused: against the scalar loops they replaced
// and against a long-double reference.
#define BOOST_TEST_MODULE norm_kernels
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "autograd/rng.h"
#include "autograd/tape.h"
#include "ops/layernorm.h"

using namespace ag;

namespace {

arma::mat random_mat(arma::uword r, arma::uword c, Rng& rng, double scale = 1.0) { return rng.normal(r, c, scale); }

}  // namespace

// The kernels stream large outputs past the caches and vectorise their column
// sums (ops/norm_kernels.cpp). These tests hold them to (1) the plain scalar
// loops they replaced, to 1e-14 relative, at shapes on both sides of the
// streaming threshold and with an odd row count (columns not 16-byte aligned),
// and (2) a long-double reference, forward and backward, at a 1e8 offset.

namespace {

struct Grads {
  arma::mat y, dx, dgamma, dbeta;
};

Grads run_fused(bool layernorm, const arma::mat& x, const arma::mat& gamma, const arma::mat& beta,
                const arma::mat& dy) {
  Tape t;
  Var xv = t.leaf(x), g = t.leaf(gamma), b = t.leaf(beta);
  Var y = layernorm ? layernorm_fused(xv, g, b) : rmsnorm_fused(xv, g);
  Grads r{y.value(), arma::mat(), arma::mat(), arma::mat()};
  t.backward(y, dy);
  r.dx = xv.grad();
  r.dgamma = g.grad();
  r.dbeta = b.grad();
  return r;
}

// The kernels as they were before streaming and vectorised sums: one scalar
// loop per pass, sums in row order. LayerNorm statistics shifted by the row's
// first value, as the kernel's are; RMSNorm without the mean's path.
Grads scalar_reference(bool layernorm, const arma::mat& x, const arma::mat& gamma, const arma::mat& beta,
                       const arma::mat& dy, double eps = 1e-5) {
  const arma::uword N = x.n_rows, D = x.n_cols;
  arma::vec mean(N, arma::fill::zeros), rstd(N);
  for (arma::uword i = 0; i < N; ++i) {
    double sum_d = 0, sum_d2 = 0;
    for (arma::uword j = 0; j < D; ++j) {
      const double d = layernorm ? x(i, j) - x(i, 0) : x(i, j);
      sum_d += d;
      sum_d2 += d * d;
    }
    const double mean_d = layernorm ? sum_d / double(D) : 0.0;
    if (layernorm) mean(i) = x(i, 0) + mean_d;
    rstd(i) = 1.0 / std::sqrt(std::max(0.0, sum_d2 / double(D) - mean_d * mean_d) + eps);
  }
  Grads r{arma::mat(N, D), arma::mat(N, D), arma::mat(1, D, arma::fill::zeros), arma::mat(1, D, arma::fill::zeros)};
  arma::vec dnorm_mean(N, arma::fill::zeros), dnorm_norm_mean(N, arma::fill::zeros);
  for (arma::uword j = 0; j < D; ++j) {
    for (arma::uword i = 0; i < N; ++i) {
      const double norm = (x(i, j) - mean(i)) * rstd(i);
      r.y(i, j) = norm * gamma(j) + (layernorm ? beta(j) : 0.0);
      r.dgamma(j) += dy(i, j) * norm;
      r.dbeta(j) += layernorm ? dy(i, j) : 0.0;
      dnorm_mean(i) += layernorm ? dy(i, j) * gamma(j) / double(D) : 0.0;
      dnorm_norm_mean(i) += dy(i, j) * gamma(j) * norm / double(D);
    }
  }
  for (arma::uword j = 0; j < D; ++j) {
    for (arma::uword i = 0; i < N; ++i) {
      const double norm = (x(i, j) - mean(i)) * rstd(i);
      r.dx(i, j) = (dy(i, j) * gamma(j) - dnorm_mean(i) - norm * dnorm_norm_mean(i)) * rstd(i);
    }
  }
  return r;
}

// LayerNorm forward and backward in long double, two passes per row.
Grads long_double_reference(const arma::mat& x, const arma::mat& gamma, const arma::mat& beta,
                            const arma::mat& dy, long double eps = 1e-5L) {
  const arma::uword N = x.n_rows, D = x.n_cols;
  Grads r{arma::mat(N, D), arma::mat(N, D), arma::mat(1, D, arma::fill::zeros), arma::mat(1, D, arma::fill::zeros)};
  std::vector<long double> dgamma(D, 0.0L), dbeta(D, 0.0L), norm(D);
  for (arma::uword i = 0; i < N; ++i) {
    long double mean = 0, var = 0, dnorm_mean = 0, dnorm_norm_mean = 0;
    for (arma::uword j = 0; j < D; ++j) mean += x(i, j);
    mean /= D;
    for (arma::uword j = 0; j < D; ++j) var += (x(i, j) - mean) * (x(i, j) - mean);
    const long double rstd = 1.0L / std::sqrt(var / D + eps);
    for (arma::uword j = 0; j < D; ++j) {
      norm[j] = (x(i, j) - mean) * rstd;
      r.y(i, j) = double(norm[j] * gamma(j) + beta(j));
      dnorm_mean += (long double)dy(i, j) * gamma(j) / D;
      dnorm_norm_mean += (long double)dy(i, j) * gamma(j) * norm[j] / D;
      dgamma[j] += dy(i, j) * norm[j];
      dbeta[j] += dy(i, j);
    }
    for (arma::uword j = 0; j < D; ++j) {
      r.dx(i, j) = double(((long double)dy(i, j) * gamma(j) - dnorm_mean - norm[j] * dnorm_norm_mean) * rstd);
    }
  }
  for (arma::uword j = 0; j < D; ++j) {
    r.dgamma(j) = double(dgamma[j]);
    r.dbeta(j) = double(dbeta[j]);
  }
  return r;
}

// max |got - want| / max |want|: relative to the matrix's scale.
double relative_error(const arma::mat& got, const arma::mat& want) {
  BOOST_TEST_REQUIRE((arma::size(got) == arma::size(want)));
  const double scale = arma::abs(want).max();
  return scale > 0 ? arma::abs(got - want).max() / scale : arma::abs(got).max();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(fused_kernels)

// 64x768: outputs stay in cache (ordinary stores); 1024x768 (6 MB),
// 1001x641 and 1500x447 are streamed, and with an odd row count every other
// column starts off a 16-byte boundary, so the streaming stores' scalar head
// and tail run. The sweeps take four columns at a time (two where a column
// is a multiple of 128 KB: 16384 rows), then one at a time for the rest: 2 to
// 7 columns, 641 and 447 leave every remainder, 16384x7 runs the pairs.
//
// y is compared exactly: the kernels add a row's sums column after column,
// as the scalar loop does, and grouping the columns must not change that.
BOOST_AUTO_TEST_CASE(fused_kernels_match_the_scalar_loops_to_1e_14) {
  Rng rng(61);
  const std::vector<std::array<arma::uword, 2>> shapes = {{64, 768}, {1024, 768}, {1001, 641}, {1500, 447}, {3, 5},
                                                          {9, 2},   {12, 3},    {33, 6},     {65, 7},    {16384, 7}};
  for (const std::array<arma::uword, 2>& s : shapes) {
    const arma::mat x = random_mat(s[0], s[1], rng) + 0.5, dy = random_mat(s[0], s[1], rng);
    const arma::mat gamma = random_mat(1, s[1], rng, 0.1) + 1.0, beta = random_mat(1, s[1], rng, 0.1);
    for (bool layernorm : {true, false}) {
      const Grads got = run_fused(layernorm, x, gamma, beta, dy);
      const Grads want = scalar_reference(layernorm, x, gamma, beta, dy);
      const std::string what = std::string(layernorm ? "layernorm " : "rmsnorm ") + shape_str(x);
      BOOST_TEST(arma::all(arma::vectorise(got.y == want.y)), what << " y, exactly");
      BOOST_TEST(relative_error(got.dx, want.dx) <= 1e-14, what << " dx");
      BOOST_TEST(relative_error(got.dgamma, want.dgamma) <= 1e-14, what << " dgamma");
      if (layernorm) BOOST_TEST(relative_error(got.dbeta, want.dbeta) <= 1e-14, what << " dbeta");
    }
  }
}

// Rows at 1e8 + noise (and one streamed shape): the shifted statistics keep
// the noise's digits, forward and backward. An ulp of 1e8 is 1.5e-8, so the
// mean itself rounds at that size; 1e-7 of the scale is what doubles allow.
BOOST_AUTO_TEST_CASE(fused_layernorm_at_a_1e8_offset_matches_long_double) {
  Rng rng(67);
  for (arma::uword rows : {5u, 1024u}) {
    const arma::mat x = random_mat(rows, 768, rng) + 1e8, dy = random_mat(rows, 768, rng);
    const arma::mat gamma = random_mat(1, 768, rng, 0.1) + 1.0, beta = random_mat(1, 768, rng, 0.1);
    const Grads got = run_fused(true, x, gamma, beta, dy);
    const Grads want = long_double_reference(x, gamma, beta, dy);
    BOOST_TEST(relative_error(got.y, want.y) < 1e-7, rows << " rows");
    BOOST_TEST(relative_error(got.dx, want.dx) < 1e-7, rows << " rows");
    BOOST_TEST(relative_error(got.dgamma, want.dgamma) < 1e-7, rows << " rows");
    BOOST_TEST(relative_error(got.dbeta, want.dbeta) < 1e-12, rows << " rows");
  }
  // The test can fail: E[x^2] - E[x]^2 in doubles gives no digit of the variance here.
  const arma::mat x = random_mat(5, 768, rng) + 1e8;
  const arma::mat naive_var = arma::mean(arma::square(x), 1) - arma::square(arma::mean(x, 1));
  BOOST_TEST(arma::abs(naive_var - arma::var(x, 1, 1)).max() > 1e-2);
}

BOOST_AUTO_TEST_SUITE_END()
