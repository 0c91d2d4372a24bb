// The fused LayerNorm and RMSNorm kernels (ops/norm_kernels.cpp): against
// their specification, llm.c's loops in the same file, bit for bit, and,
// through layernorm_fused, against a long-double reference.
#define BOOST_TEST_MODULE norm_kernels
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <string>
#include <vector>

#include "autograd/rng.h"
#include "autograd/tape.h"
#include "ops/layernorm.h"
#include "ops/norm_kernels.h"
#include "ops/sweeps.h"
#include "autograd/machine.h"

using namespace ag;

namespace {

arma::mat random_mat(arma::uword r, arma::uword c, Rng& rng, double scale = 1.0) { return rng.normal(r, c, scale); }

}  // namespace


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

// LayerNorm forward and backward in long double, two passes per row.
Grads long_double_reference(const arma::mat& x, const arma::mat& gamma, const arma::mat& beta,
                            const arma::mat& dy, long double eps = 1e-5L) {
  const arma::uword N = x.n_rows, D = x.n_cols;
  Grads r{arma::mat(N, D), arma::mat(N, D), arma::mat(1, D, arma::fill::zeros), arma::mat(1, D, arma::fill::zeros)};
  std::vector<long double> dgamma(D, 0.0L), dbeta(D, 0.0L), xhat(D);
  for (arma::uword i = 0; i < N; ++i) {
    long double mean = 0, var = 0, dxhat_mean = 0, dxhat_xhat_mean = 0;
    for (arma::uword j = 0; j < D; ++j) mean += x(i, j);
    mean /= D;
    for (arma::uword j = 0; j < D; ++j) var += (x(i, j) - mean) * (x(i, j) - mean);
    const long double rstd = 1.0L / std::sqrt(var / D + eps);
    for (arma::uword j = 0; j < D; ++j) {
      xhat[j] = (x(i, j) - mean) * rstd;
      r.y(i, j) = double(xhat[j] * gamma(j) + beta(j));
      dxhat_mean += (long double)dy(i, j) * gamma(j) / D;
      dxhat_xhat_mean += (long double)dy(i, j) * gamma(j) * xhat[j] / D;
      dgamma[j] += dy(i, j) * xhat[j];
      dbeta[j] += dy(i, j);
    }
    for (arma::uword j = 0; j < D; ++j) {
      r.dx(i, j) = double(((long double)dy(i, j) * gamma(j) - dxhat_mean - xhat[j] * dxhat_xhat_mean) * rstd);
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
// 1001x641 and 1500x447 are streamed (above twice the L2 of every CPU this
// project has met). With an odd row count the columns start at different
// offsets from a vector boundary, so a streamed output goes a column at a
// time, each with its scalar head and tail. The sweeps take up to eight
// columns at a time (sweep_plan().group; where columns alias in the L1d, as
// many as its ways hold: on an 8-way L1d eight for a sweep of x, four for one
// of x and dy; two where they alias in the L2 on an Intel CPU: 16384 rows), then
// four, two and one for the rest: 2 to 15 columns, 641 and 447 leave
// remainders, 16384x7 and 16384x11 run the aliased widths and their rests. Rows go kLanes at
// a time and the rest one by one: 3, 9, 33, 65 and 1001 rows leave some.
// 1x768 and 128x768: the live page's finite differences take one row's
// numbers from a block of 128.
//
// The kernels against their specification (ops/norm_kernels.cpp, spec::):
// y, mean, rstd and dx to the bit, because a row's sums add column after
// column in both. dgamma and dbeta add down the rows in vector lanes in the
// kernels and in row order in the loops: the same terms in another order.
BOOST_AUTO_TEST_CASE(the_kernels_compute_their_specification_bit_for_bit) {
  Rng rng(61);
  const std::vector<std::array<arma::uword, 2>> shapes = {{64, 768}, {1024, 768}, {1001, 641}, {1500, 447}, {3, 5},
                                                          {9, 2},   {12, 3},    {33, 6},     {65, 7},    {16384, 7},
                                                          {1, 1},   {2, 1},     {1, 768},    {128, 768}, {17, 15},
                                                          {40, 13}, {16384, 11}};
  const auto same = [](const arma::mat& a, const arma::mat& b) {
    return arma::size(a) == arma::size(b) && std::equal(a.begin(), a.end(), b.begin());
  };
  for (const std::array<arma::uword, 2>& s : shapes) {
    const arma::mat x = random_mat(s[0], s[1], rng) + 0.5, dy = random_mat(s[0], s[1], rng);
    const arma::mat gamma = random_mat(1, s[1], rng, 0.1) + 1.0, beta = random_mat(1, s[1], rng, 0.1);
    const std::string shape = shape_str(x);
    arma::vec mean, rstd, spec_mean, spec_rstd;
    arma::mat y, spec_y;
    const auto fresh = [&] {
      kernels::NormGrads g{arma::mat(arma::size(x)), arma::mat(1, s[1], arma::fill::zeros), arma::mat(1, s[1], arma::fill::zeros)};
      return g;
    };
    kernels::NormGrads g = fresh(), want = fresh();

    kernels::layernorm_forward(x, gamma, beta, 1e-5, mean, rstd, y);
    kernels::spec::layernorm_forward(x, gamma, beta, 1e-5, spec_mean, spec_rstd, spec_y);
    BOOST_TEST(same(y, spec_y), "layernorm " << shape << " y");
    BOOST_TEST(same(mean, spec_mean), "layernorm " << shape << " mean");
    BOOST_TEST(same(rstd, spec_rstd), "layernorm " << shape << " rstd");
    kernels::layernorm_backward(x, gamma, dy, mean, rstd, g);
    kernels::spec::layernorm_backward(x, gamma, dy, mean, rstd, want);
    BOOST_TEST(same(g.dx, want.dx), "layernorm " << shape << " dx");
    BOOST_TEST(relative_error(g.dgamma, want.dgamma) <= 1e-14, "layernorm " << shape << " dgamma");
    BOOST_TEST(relative_error(g.dbeta, want.dbeta) <= 1e-14, "layernorm " << shape << " dbeta");

    g = fresh(), want = fresh();
    kernels::rmsnorm_forward(x, gamma, 1e-5, rstd, y);
    kernels::spec::rmsnorm_forward(x, gamma, 1e-5, spec_rstd, spec_y);
    BOOST_TEST(same(y, spec_y), "rmsnorm " << shape << " y");
    BOOST_TEST(same(rstd, spec_rstd), "rmsnorm " << shape << " rstd");
    kernels::rmsnorm_backward(x, gamma, dy, rstd, g);
    kernels::spec::rmsnorm_backward(x, gamma, dy, rstd, want);
    BOOST_TEST(same(g.dx, want.dx), "rmsnorm " << shape << " dx");
    BOOST_TEST(relative_error(g.dgamma, want.dgamma) <= 1e-14, "rmsnorm " << shape << " dgamma");
  }
}

// rows_of visits every row once, kLanes at a time where it can; given an
// output column, it starts the vectors on the column's first aligned row (a
// streamed store needs one), whatever the column's offset from a boundary.
// fill_column streams through it: every value lands, none outside.
BOOST_AUTO_TEST_CASE(rows_of_visits_every_row_once_and_streams_on_aligned_rows) {
  std::vector<double> memory(200 + 2 * kLanes, -1.0);
  double* base = memory.data();
  while (reinterpret_cast<std::uintptr_t>(base) % sizeof(Lanes) != 0) ++base;  // the first aligned double
  for (arma::uword N : {0u, 1u, 7u, 8u, 9u, 100u}) {
    for (std::size_t offset = 0; offset < kLanes; ++offset) {
      double* column = base + offset;
      std::vector<int> visits(N, 0);
      arma::uword vectors = 0, misaligned = 0;
      rows_of(N, [&](arma::uword i, auto row) {
        constexpr arma::uword width = std::is_same_v<decltype(row), Lanes> ? kLanes : 1;
        for (arma::uword r = i; r < i + width; ++r) ++visits.at(r);
        if (width > 1) {
          ++vectors;
          if (reinterpret_cast<std::uintptr_t>(column + i) % sizeof(Lanes) != 0) ++misaligned;
        }
      }, column);
      BOOST_TEST(std::all_of(visits.begin(), visits.end(), [](int v) { return v == 1; }), "N " << N << " offset " << offset);
      BOOST_TEST(misaligned == 0u, "N " << N << " offset " << offset);
      if (N >= 2 * kLanes) BOOST_TEST(vectors >= N / kLanes - 1, "N " << N << " offset " << offset);
      std::fill(memory.begin(), memory.end(), -1.0);
      fill_column(column, N, 2.5, true);
      const std::ptrdiff_t first = column - memory.data();
      for (std::ptrdiff_t k = 0; k < std::ptrdiff_t(memory.size()); ++k) {
        const bool inside = k >= first && k < first + std::ptrdiff_t(N);
        if (memory[k] != (inside ? 2.5 : -1.0)) BOOST_ERROR("fill_column N " << N << " offset " << offset << " at " << k);
      }
    }
  }
}

// The sweeps' plan: the alias strides are powers of two no larger than their
// caches (a way of each), a group whose columns alias in the L1d holds the
// columns it reads (of x, or of x and dy) within the L1d's ways, and the
// streaming threshold is the fixed 4 MiB. Then which widths in_groups takes
// at each kind of length, for a sweep of x and for one of x and dy.
BOOST_AUTO_TEST_CASE(the_sweep_plan_follows_the_caches) {
  const SweepPlan& plan = sweep_plan();
  const CacheSizes& caches = cache_sizes();
  BOOST_TEST_MESSAGE(describe_caches(caches) << ": alias strides L2 " << plan.alias_stride / 1024 << " KiB, L1d "
                                             << plan.l1_alias_stride / 1024 << " KiB; " << cpu_vendor() << ", pairs where the L2 aliases: "
                                             << (plan.l2_pairs ? "yes" : "no") << "; groups of " << plan.group
                                             << " columns (where the L1d aliases: " << l1_group(plan, Reads::X)
                                             << " reading x, " << l1_group(plan, Reads::XAndDy) << " reading x and dy), "
                                             << kLanes << " lanes");
  BOOST_TEST((plan.group == 4u || plan.group == 8u), plan.group);
  for (std::size_t stride : {plan.alias_stride, plan.l1_alias_stride}) {
    BOOST_TEST((stride & (stride - 1)) == 0u, stride);
    BOOST_TEST(stride >= 4096u, stride);
  }
  if (caches.l2 != 0) BOOST_TEST(plan.alias_stride <= caches.l2);
  if (caches.l1d != 0) BOOST_TEST(plan.l1_alias_stride <= caches.l1d);
  const bool l1d_known = caches.l1d != 0 && caches.l1d_ways != 0 && caches.l1d % caches.l1d_ways == 0;
  BOOST_TEST(plan.l1_ways == (l1d_known ? caches.l1d_ways : 8u));  // the L1d's ways, else the fallback
  for (Reads reads : {Reads::X, Reads::XAndDy}) {
    const arma::uword streams = static_cast<arma::uword>(reads), group = l1_group(plan, reads);
    BOOST_TEST((group & (group - 1)) == 0u, group);
    BOOST_TEST(group * streams <= plan.l1_ways);         // its streams fit the ways
    BOOST_TEST(2 * group * streams > plan.l1_ways);      // the largest that fits
  }
  BOOST_TEST(plan.stream_bytes == std::size_t{4} << 20);

  auto widths = [](Reads reads, arma::uword N, arma::uword D) {
    std::vector<arma::uword> seen;
    arma::uword next = 0;
    in_groups(reads, N, 0, D, [&](arma::uword j, auto group) {
      BOOST_TEST(j == next);  // every column once, in order
      next = j + decltype(group)::value;
      seen.push_back(decltype(group)::value);
    });
    BOOST_TEST(next == D);
    return seen;
  };
  const arma::uword l1_rows = plan.l1_alias_stride / sizeof(double), l2_rows = plan.alias_stride / sizeof(double);
  BOOST_TEST(plan.l2_pairs == (cpu_vendor() == "GenuineIntel"), cpu_vendor());
  for (Reads reads : {Reads::X, Reads::XAndDy}) {
    const arma::uword l1_width = std::min(plan.group, l1_group(plan, reads));
    BOOST_TEST(widths(reads, l2_rows, 16).front() == (plan.l2_pairs ? 2u : l1_width));
    if (l2_rows != l1_rows) BOOST_TEST(widths(reads, l1_rows, 16).front() == l1_width);
    BOOST_TEST(widths(reads, l1_rows + 3, 16).front() == plan.group);  // columns spread over the sets
  }
  // The L1ds met: 8 ways (the family-25 EPYC's 32 KiB; the fallback) and 12
  // (the family-26 EPYC's 48 KiB): eight columns of x, four of x and dy.
  for (arma::uword ways : {8u, 12u}) {
    SweepPlan other = plan;
    other.l1_ways = ways;
    BOOST_TEST(l1_group(other, Reads::X) == 8u, ways);
    BOOST_TEST(l1_group(other, Reads::XAndDy) == 4u, ways);
  }
}

// The test can fail: the spec is a different program from the kernels, and a
// kernel that took the terms of dx in another order is off in the last bits.
BOOST_AUTO_TEST_CASE(bit_for_bit_tells_a_reordered_dx) {
  Rng rng(71);
  const arma::mat x = random_mat(64, 768, rng) + 0.5, dy = random_mat(64, 768, rng);
  const arma::mat gamma = random_mat(1, 768, rng, 0.1) + 1.0, beta = random_mat(1, 768, rng, 0.1);
  arma::vec mean, rstd;
  arma::mat y;
  kernels::layernorm_forward(x, gamma, beta, 1e-5, mean, rstd, y);
  kernels::NormGrads g{arma::mat(arma::size(x)), arma::mat(1, 768, arma::fill::zeros), arma::mat(1, 768, arma::fill::zeros)};
  kernels::layernorm_backward(x, gamma, dy, mean, rstd, g);
  // dx with the three terms in one expression, rstd multiplied in first: the same math.
  const arma::mat xhat = (x.each_col() - mean).eval().each_col() % rstd;
  const arma::mat dxhat = dy.each_row() % gamma;
  const arma::vec m1 = arma::mean(dxhat, 1), m2 = arma::mean(dxhat % xhat, 1);
  arma::mat reordered = dxhat.each_col() % rstd;
  reordered -= (xhat.each_col() % (m2 % rstd)).eval().each_col() + (m1 % rstd);
  BOOST_TEST(relative_error(reordered, g.dx) < 1e-12);  // the same gradient ...
  BOOST_TEST(!std::equal(reordered.begin(), reordered.end(), g.dx.begin()));  // ... in other bits
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
