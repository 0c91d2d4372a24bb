// LayerNorm and RMSNorm, fused and composed: forward + backward of one
// N x D input with an N x D output gradient, as a transformer layer runs it.
#include <armadillo>

#include <algorithm>
#include <vector>

#include "autograd/memory.h"
#include "autograd/tape.h"
#include "bench/cases.h"
#include "autograd/rng.h"
#include "ops/layernorm.h"
#include "ops/norm_kernels.h"

namespace bench {

namespace {

struct Shape {
  arma::uword rows, cols;
};

// Inputs drawn once per case; every run records them on a cleared tape.
struct NormInputs {
  arma::mat x, gamma, beta, dy;
  NormInputs(Shape s, std::uint64_t seed) {
    ag::Rng rng(seed);
    x = rng.normal(s.rows, s.cols, 1.0) + 0.5;
    gamma = 1.0 + rng.normal(1, s.cols, 0.1);
    beta = rng.normal(1, s.cols, 0.1);
    dy = rng.normal(s.rows, s.cols, 1.0);
  }
};

enum class Which { LayerNormFused, LayerNormComposed, RMSNormFused, RMSNormComposed };

const char* which_name(Which w) {
  switch (w) {
    case Which::LayerNormFused: return "layernorm_fused";
    case Which::LayerNormComposed: return "layernorm_composed";
    case Which::RMSNormFused: return "rmsnorm_fused";
    case Which::RMSNormComposed: return "rmsnorm_composed";
  }
  return "";
}

ag::Var forward(Which w, ag::Var x, ag::Var gamma, ag::Var beta) {
  switch (w) {
    case Which::LayerNormFused: return ag::layernorm_fused(x, gamma, beta);
    case Which::LayerNormComposed: return ag::layernorm_composed(x, gamma, beta);
    case Which::RMSNormFused: return ag::rmsnorm_fused(x, gamma);
    case Which::RMSNormComposed: return ag::rmsnorm_composed(x, gamma);
  }
  return x;
}

// The least traffic: the forward reads x and writes y, the backward reads x
// and dy and writes dx (gamma, beta and the row statistics are small).
void set_traffic(Result& r, Shape s) {
  const double matrix = double(s.rows) * double(s.cols) * sizeof(double);
  r.read_bytes = 3 * matrix;
  r.write_bytes = 2 * matrix;
  r.gbps = (r.read_bytes + r.write_bytes) / r.time.median_s / 1e9;
}

// The bound's body: that least traffic and nothing else, as pure passes on
// the case's own buffers: a sum over x, a non-temporal fill of y (the
// forward), a sum over x and dy, a non-temporal fill of dx (the backward).
// Nothing that does the case's work from where its inputs are can take less.
// Timed with the case's plan, right after it, so the same caches, pages and
// drift price both. (Rates measured on other buffers do not: the bandwidth
// rows' non-temporal fill runs at 2.5 GB/s in some processes and 21-23 in
// others, the same binary, and they ran on 4 KB pages where the kernels use
// huge pages.)
void least_traffic(const arma::mat& x, const arma::mat& dy, arma::mat& y, arma::mat& dx) {
  double sums = sum_of(x.memptr(), x.n_elem);
  fill_streamed(y.memptr(), y.n_elem, 1.0);
  sums += sum_of(x.memptr(), x.n_elem) + sum_of(dy.memptr(), dy.n_elem);
  fill_streamed(dx.memptr(), dx.n_elem, 2.0);
  keep(&sums);
  keep(y.memptr());
  keep(dx.memptr());
}

// The fused kernels' own traffic (ops/norm_kernels.cpp), as pure passes on
// their buffers: their four sweeps read x (the statistics), x while y is
// filled (the forward), x and dy (the row sums), x and dy while dx is filled:
// 8 matrix transfers where the bound above has 5. A kernel at 1x this would
// be all memory, in the order it walks.
void sweep_traffic(const arma::mat& x, const arma::mat& dy, arma::mat& y, arma::mat& dx) {
  double sums = sum_of(x.memptr(), x.n_elem);
  sums += sum_of(x.memptr(), x.n_elem);
  fill_streamed(y.memptr(), y.n_elem, 1.0);
  sums += sum_of(x.memptr(), x.n_elem) + sum_of(dy.memptr(), dy.n_elem);
  sums += sum_of(x.memptr(), x.n_elem) + sum_of(dy.memptr(), dy.n_elem);
  fill_streamed(dx.memptr(), dx.n_elem, 2.0);
  keep(&sums);
  keep(y.memptr());
  keep(dx.memptr());
}

Result run_norm(Which w, Shape s, const Plan& plan) {
  const NormInputs in(s, 42);
  ag::Tape tape;
  tape.keep_intermediate_grads(false);  // as PyTorch keeps only the leaves' .grad
  ag::Var x, gamma, beta;
  arma::mat dy;
  // Untimed: a cleared tape, fresh leaves (recording a leaf copies its
  // matrix) and a fresh dy, which backward takes over without copying, as
  // PyTorch's y.backward(dy) uses dy as it is.
  auto setup = [&] {
    tape.clear();
    x = tape.leaf(in.x, "x");
    gamma = tape.leaf(in.gamma, "gamma");
    beta = tape.leaf(in.beta, "beta");
    dy = in.dy;
  };
  // Timed: forward, backward from dy, and reading every gradient.
  auto body = [&] {
    ag::Var y = forward(w, x, gamma, beta);
    tape.backward(y, std::move(dy));
    consume(x.grad());
    consume(gamma.grad());
    if (w == Which::LayerNormFused || w == Which::LayerNormComposed) consume(beta.grad());
  };
  Result r;
  r.name = which_name(w);
  r.shape = ag::shape_str(s.rows, s.cols);
  setup();
  forward(w, x, gamma, beta);
  r.saved_bytes = static_cast<long long>(tape.saved_bytes());
  r.new_bytes = static_cast<long long>(tape.saved_bytes_since(beta.id + 1));
  r.time = measure(setup, body, plan);
  set_traffic(r, s);
  // The bound on the same leaves, and outputs allocated each run as the tape's are.
  r.bound_s = measure(setup, [&] {
                arma::mat y(s.rows, s.cols, arma::fill::none), dx(s.rows, s.cols, arma::fill::none);
                least_traffic(x.value(), dy, y, dx);
              }, plan).median_s;
  tape.clear();
  return r;
}

// The fused kernels alone (ops/norm_kernels.h), no tape: the same inputs every
// run and the same output matrices, reused. Against the *_fused rows this is
// what the tape path costs (leaves, fresh outputs, moving gradients).
Result run_kernel(bool layernorm, Shape s, const Plan& plan) {
  const NormInputs in(s, 42);
  arma::vec mean, rstd;
  arma::mat y;
  ag::kernels::NormGrads g{arma::mat(s.rows, s.cols), arma::mat(1, s.cols), arma::mat(1, s.cols)};
  ag::back_heap_with_huge_pages();  // what Tape::clear() does for the tape rows: the same pages
  auto setup = [&] {
    g.dgamma.zeros();
    g.dbeta.zeros();
  };
  auto body = [&] {
    if (layernorm) {
      ag::kernels::layernorm_forward(in.x, in.gamma, in.beta, 1e-5, mean, rstd, y);
      ag::kernels::layernorm_backward(in.x, in.gamma, in.dy, mean, rstd, g);
    } else {
      ag::kernels::rmsnorm_forward(in.x, in.gamma, 1e-5, rstd, y);
      ag::kernels::rmsnorm_backward(in.x, in.gamma, in.dy, rstd, g);
    }
    consume(y);
    consume(g.dx);
    consume(g.dgamma);
  };
  Result r;
  r.name = layernorm ? "layernorm_kernel" : "rmsnorm_kernel";
  r.shape = ag::shape_str(s.rows, s.cols);
  r.time = measure(setup, body, plan);
  set_traffic(r, s);
  r.bound_s = measure({}, [&] { least_traffic(in.x, in.dy, y, g.dx); }, plan).median_s;  // the same buffers
  r.sweeps_s = measure({}, [&] { sweep_traffic(in.x, in.dy, y, g.dx); }, plan).median_s;
  r.note = "the fused kernels alone: no tape, outputs reused";
  return r;
}

}  // namespace

// quick: a sixteenth of the rows (at least 64), a smoke run of every case.
// 4000 rows: not a power of two, so no two columns' rows share cache sets.
std::vector<Case> norm_cases(bool quick) {
  std::vector<Shape> shapes = {{64, 768}, {4000, 768}, {4096, 768}, {16384, 1024}};
  if (quick) {
    for (Shape& s : shapes) s.rows = std::max<arma::uword>(64, s.rows / 16);
  }
  const Which order[] = {Which::LayerNormFused, Which::LayerNormComposed, Which::RMSNormFused,
                         Which::RMSNormComposed};
  std::vector<Case> cases;
  for (Which w : order) {
    for (Shape s : shapes) {
      cases.push_back({which_name(w), ag::shape_str(s.rows, s.cols),
                       [w, s](const Plan& plan) { return run_norm(w, s, plan); }});
    }
  }
  for (bool layernorm : {true, false}) {
    for (Shape s : shapes) {
      cases.push_back({layernorm ? "layernorm_kernel" : "rmsnorm_kernel", ag::shape_str(s.rows, s.cols),
                       [layernorm, s](const Plan& plan) { return run_kernel(layernorm, s, plan); }});
    }
  }
  return cases;
}

}  // namespace bench
