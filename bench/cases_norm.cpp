// LayerNorm and RMSNorm, fused and composed: forward + backward of one
// N x D input with an N x D output gradient, as a transformer layer runs it.
#include <armadillo>

#include <algorithm>
#include <vector>

#include "autograd/tape.h"
#include "bench/cases.h"
#include "autograd/rng.h"
#include "ops/layernorm.h"

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

Result run_norm(Which w, Shape s, const Plan& plan) {
  const NormInputs in(s, 42);
  ag::Tape tape;
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
  // At least: read x and dy, write y and dx (gamma, beta and the row statistics are small).
  r.min_bytes = 4.0 * double(s.rows) * double(s.cols) * sizeof(double);
  r.gbps = r.min_bytes / r.time.median_s / 1e9;
  tape.clear();
  return r;
}

}  // namespace

// quick: a sixteenth of the rows (at least 64), a smoke run of every case.
std::vector<Case> norm_cases(bool quick) {
  std::vector<Shape> shapes = {{64, 768}, {4096, 768}, {16384, 1024}};
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
  return cases;
}

}  // namespace bench
