// %% [markdown]
// # Lesson 07: LayerNorm, RMSNorm and BatchNorm side by side
//
// Three normalisations, one matrix. Rows are samples (tokens), columns are
// features, as everywhere in this project.
//
// | | normalises | subtracts the mean? | learned parameters |
// |---|---|---|---|
// | LayerNorm | each **row** (over the features of one token) | yes | gamma, beta: 2 x d_model |
// | RMSNorm | each **row** | no, divides by the root mean square | gamma: d_model |
// | BatchNorm | each **column** (over the batch) | yes | gamma, beta: 2 x d_model |
//
// We apply all three with gamma = 1 and beta = 0 and look at what comes out.

// %%
#include <algorithm>
#include <chrono>
#include <functional>
#include <cstdio>
#include <iostream>
#include <vector>

#include "nn/norm.h"
#include "notebooks/notebook.h"
#include "ops/layernorm.h"
#include "ops/ops.h"

using ag::Tape;
using ag::Var;

// 4 tokens x 3 features; the features live on very different scales.
const arma::mat x = {{1.0, 200.0, 0.03}, {2.0, 180.0, 0.01}, {4.0, 260.0, 0.02}, {3.0, 220.0, 0.06}};

struct Outputs {
  arma::mat layer, rms, batch;
};

Outputs normalise_three_ways(const arma::mat& m) {
  Tape tape;
  Var v = tape.constant(m, "x");
  Var g = tape.constant(arma::ones(1, m.n_cols), "gamma");
  Var b = tape.constant(arma::zeros(1, m.n_cols), "beta");
  return {ag::layernorm_fused(v, g, b).value(), ag::rmsnorm_fused(v, g).value(),
          ag::batchnorm_composed(v, g, b).value()};
}

arma::mat row_var(const arma::mat& m) { return arma::var(m, 1, 1); }  // norm_type 1: divide by D
arma::mat col_var(const arma::mat& m) { return arma::var(m, 1, 0); }  // divide by N

// %% [markdown]
// ## What each one produces

// %%
NB_CELL {
  const Outputs out = normalise_three_ways(x);
  nb::show("x", x);
  nb::show("LayerNorm(x)", out.layer);
  nb::show("RMSNorm(x)", out.rms);
  nb::show("BatchNorm(x)", out.batch);
  std::cout << "\nper row    LayerNorm mean/var      RMSNorm mean/mean-square\n";
  for (arma::uword r = 0; r < x.n_rows; ++r) {
    std::printf("row %llu     %7.4f / %6.4f       %7.4f / %6.4f\n", (unsigned long long)r, arma::mean(out.layer.row(r)),
                row_var(out.layer)(r), arma::mean(out.rms.row(r)), arma::mean(arma::square(out.rms.row(r))));
  }
  std::cout << "\nper column BatchNorm mean/var\n";
  for (arma::uword c = 0; c < x.n_cols; ++c) {
    std::printf("column %llu  %7.4f / %6.4f\n", (unsigned long long)c, arma::mean(out.batch.col(c)), col_var(out.batch)(c));
  }
  nb::check_close("LayerNorm: every row has mean 0", arma::mat(arma::mean(out.layer, 1)), arma::zeros(4, 1), 1e-12);
  nb::check_close("LayerNorm: every row has variance 1", row_var(out.layer), arma::ones(4, 1), 1e-4);
  nb::check_close("RMSNorm: every row has mean square 1", arma::mat(arma::mean(arma::square(out.rms), 1)),
                  arma::ones(4, 1), 1e-4);
  nb::check(arma::abs(arma::mean(out.rms, 1)).min() > 0.1, "RMSNorm: no row is centred (all row means > 0.1)");
  nb::check_close("BatchNorm: every column has mean 0", arma::mat(arma::mean(out.batch, 0)), arma::zeros(1, 3), 1e-12);
  const arma::mat v = col_var(x);
  nb::check_close("BatchNorm: every column has variance var / (var + eps)", col_var(out.batch),
                  arma::mat(v / (v + 1e-5)), 1e-9);
}

// %% [markdown]
// LayerNorm and RMSNorm mix the three features of a token: feature 1 (around
// 200) dominates every row, so after normalisation each row looks alike: one large
// positive value and two negative ones (LayerNorm), or one value near sqrt(3) and
// two near 0 (RMSNorm, which keeps everything positive because it never subtracts
// the mean). BatchNorm puts each feature on its own scale: the 0.01-0.06 column
// becomes as informative as the 200 column.
//
// One number is not 1: BatchNorm's column 2 has variance 0.97. Its values spread
// by a few hundredths, so its variance is only 3.5e-4, and eps = 1e-5 inside the
// square root is 3% of that: the output variance is var / (var + eps). eps is
// "negligible" only next to the variance it protects.
//
// ## One token alone, or in a batch
//
// LayerNorm and RMSNorm look at one row at a time: a token gets the same output
// whatever else is in the batch. BatchNorm's output for a token depends on its
// batch mates; that is why Transformers, with sequences of varying length and
// batches of one at inference, use LayerNorm or RMSNorm.

// %%
NB_CELL {
  const Outputs in_batch = normalise_three_ways(x);
  const Outputs with_others = normalise_three_ways(arma::join_cols(x.rows(0, 1), arma::mat{{10.0, 100.0, 0.5}}));
  nb::show("LayerNorm of token 0, batch of 4", arma::mat(in_batch.layer.row(0)));
  nb::show("LayerNorm of token 0, another batch", arma::mat(with_others.layer.row(0)));
  nb::show("BatchNorm of token 0, batch of 4", arma::mat(in_batch.batch.row(0)));
  nb::show("BatchNorm of token 0, another batch", arma::mat(with_others.batch.row(0)));
  nb::check_close("LayerNorm ignores the batch", arma::mat(with_others.layer.row(0)), arma::mat(in_batch.layer.row(0)), 1e-15);
  nb::check_close("RMSNorm ignores the batch", arma::mat(with_others.rms.row(0)), arma::mat(in_batch.rms.row(0)), 1e-15);
  nb::check(arma::abs(with_others.batch.row(0) - in_batch.batch.row(0)).max() > 0.1,
            "BatchNorm's output for the same token changes with the batch");
}

// %% [markdown]
// ## Parameters
//
// Seed 002: "LayerNorm has 2 x d_model trainable parameters ... with d_model = 512,
// LayerNorm has 1024 parameters." We count them on the modules of `nn/`.

// %%
NB_CELL {
  const arma::uword d_model = 512;
  ag::LayerNorm layer_norm("ln", d_model, ag::Impl::Fused);
  ag::RMSNorm rms_norm("rms", d_model, ag::Impl::Fused);
  auto count = [](ag::Module& m) {
    std::size_t n = 0;
    for (ag::Parameter* p : m.parameters()) n += p->value().n_elem;
    return n;
  };
  std::cout << "d_model = " << d_model << ": LayerNorm " << count(layer_norm) << " parameters (gamma, beta), RMSNorm "
            << count(rms_norm) << " (gamma only)\n";
  nb::check(count(layer_norm) == 2 * d_model, "LayerNorm has 2 x d_model = 1024 parameters");
  nb::check(count(rms_norm) == d_model, "RMSNorm has d_model = 512 parameters");
}

// %% [markdown]
// (BatchNorm also has 2 x d_model learned parameters, plus, for inference, a
// running mean and variance per feature that are tracked, not learned.)
//
// ## Speed
//
// Seed 002 says RMSNorm is "~10-15% faster" than LayerNorm. We time forward plus
// backward of each, composed and fused, on a 512 x 768 matrix (a batch of 512
// tokens of a small Transformer), best of 7 runs on one thread. The numbers are
// measured each time the notebook runs, so they depend on the machine; nothing
// below asserts a timing.

// %%
double time_ms(const std::function<Var(Tape&, Var, Var, Var)>& norm, const arma::mat& input) {
  std::vector<double> runs;
  const arma::mat dy = arma::ones(arma::size(input)) * 0.01;
  for (int r = 0; r < 7; ++r) {
    Tape tape;
    Var v = tape.leaf(input, "x");
    Var g = tape.leaf(arma::ones(1, input.n_cols), "gamma");
    Var b = tape.leaf(arma::zeros(1, input.n_cols), "beta");
    const auto start = std::chrono::steady_clock::now();
    Var y = norm(tape, v, g, b);
    tape.backward(y, dy);
    runs.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  return *std::min_element(runs.begin(), runs.end());
}

NB_CELL {
  arma::arma_rng::set_seed(7);
  const arma::mat input = arma::randn(512, 768);
  struct Row {
    const char* name;
    std::function<Var(Tape&, Var, Var, Var)> f;
  };
  const std::vector<Row> rows = {
      {"LayerNorm composed", [](Tape&, Var v, Var g, Var b) { return ag::layernorm_composed(v, g, b); }},
      {"LayerNorm fused", [](Tape&, Var v, Var g, Var b) { return ag::layernorm_fused(v, g, b); }},
      {"RMSNorm composed", [](Tape&, Var v, Var g, Var) { return ag::rmsnorm_composed(v, g); }},
      {"RMSNorm fused", [](Tape&, Var v, Var g, Var) { return ag::rmsnorm_fused(v, g); }},
      {"BatchNorm composed", [](Tape&, Var v, Var g, Var b) { return ag::batchnorm_composed(v, g, b); }},
  };
  nb::Plot plot{"speed", "Forward + backward on 512 x 768 (best of 7, one thread)", "", "milliseconds",
                false, false, {}, {"set style fill solid 0.7", "set boxwidth 0.6", "set yrange [0:*]", "unset key",
                                   "set xtics rotate by -20"}};
  std::vector<double> xs, ms;
  std::string xtics = "set xtics (";
  std::printf("%-20s %10s\n", "", "ms");
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const double t = time_ms(rows[k].f, input);
    std::printf("%-20s %10.2f\n", rows[k].name, t);
    xs.push_back(double(k));
    ms.push_back(t);
    xtics += std::string(k ? ", " : "") + "\"" + rows[k].name + "\" " + std::to_string(k);
  }
  plot.extra.push_back(xtics + ")");
  plot.add("time", xs, ms, "boxes");
  nb::draw(plot);
  std::printf("fused / composed: LayerNorm %.2f, RMSNorm %.2f;  RMSNorm fused / LayerNorm fused: %.2f\n",
              ms[1] / ms[0], ms[3] / ms[2], ms[3] / ms[1]);
}

// %% [markdown]
// The fused versions make one pass over memory where the composed graphs make a
// dozen (and allocate a matrix for each intermediate), so they are several times
// faster. RMSNorm saves the mean and its subtraction; how much that buys depends
// on the machine, the shape and the implementation, which is why a claim like
// "10-15% faster" is worth measuring rather than repeating.
//
// ## What to remember
//
// - LayerNorm and RMSNorm normalise each token over its features; BatchNorm normalises each feature over the batch.
// - Only BatchNorm's output depends on the other samples in the batch.
// - LayerNorm has 2 x d_model parameters, RMSNorm d_model.
// - Speed is measured, not assumed: the fused kernels win by doing less memory traffic.
