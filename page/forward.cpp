#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "autograd/tape.h"
#include "nn/norm.h"
#include "ops/ops.h"
#include "page/views.h"

namespace page {

namespace {

// Runs one view; an engine error (or a NaN/inf, caught by anomaly mode)
// becomes that view's message, and none of its numbers are kept.
template <class Fill>
void view(const std::string& name, Report& report, Fill fill) {
  Report part;
  try {
    ag::Tape tape;
    tape.set_anomaly_mode(true);  // the first NaN/inf throws, naming the op that made it
    fill(tape, part);
  } catch (const ag::AnomalyError& e) {
    report.errors[name] = std::string("the numbers overflow a double (values up to about 1e150 work): ") + e.what();
    return;
  } catch (const std::exception& e) {
    report.errors[name] = e.what();
    return;
  }
  report.numbers.insert(part.numbers.begin(), part.numbers.end());
  report.labels.insert(part.labels.begin(), part.labels.end());
  report.views.insert(part.views.begin(), part.views.end());
}

// A batch's per-row results are sent for its first rows only: the JSON and
// the tables of 10,000 rows froze the tab (24 s), and nobody reads them.
arma::uword shown_rows(const arma::mat& x) {
  return std::min({x.n_rows, kShownRows, std::max<arma::uword>(1, kShownNumbers / x.n_cols)});
}

arma::mat first_rows(const arma::mat& m, arma::uword rows) {
  return m.n_rows <= rows ? m : arma::mat(m.rows(0, rows - 1));
}

// The steps as prefix0, prefix1, ..., in the view's order after `first`; `after_xhat`
// (when given) goes in right after the normalised value's step.
void put_steps(const std::string& prefix, const ag::NormSteps& s, arma::uword rows, Report& report,
               std::vector<std::string> order, const std::string& after_xhat = "") {
  for (std::size_t k = 0; k < s.steps.size(); ++k) {
    const std::string key = prefix + std::to_string(k);
    report.put(key, first_rows(s.steps[k].second.value(), rows), s.steps[k].first);
    order.push_back(key);
    if (!after_xhat.empty() && s.steps[k].second.id == s.xhat.id) order.push_back(after_xhat);
  }
  report.views[prefix.substr(0, prefix.size() - 1)] = order;
}

// Eval mode: the project's ag::BatchNorm (PyTorch's BatchNorm1d: momentum 0.1,
// running mean 0 and variance 1 to start, the variance unbiased), after `steps`
// training steps on this batch, then normalising with its running statistics.
void batchnorm_eval(const Request& r, ag::Tape& tape, Report& report) {
  ag::BatchNorm bn("bn", r.x.n_cols, 0.1, r.eps);
  bn.gamma.mutable_value() = r.gamma;
  bn.beta.mutable_value() = r.beta;
  for (int s = 0; s < r.steps; ++s) {
    ag::Tape step;
    bn.forward(step.constant(r.x));
  }
  bn.eval();
  ag::Var y = bn.forward(tape.constant(r.x, "x"));
  report.put("bn.running_mean", bn.running_mean, "running mean");
  report.put("bn.running_var", bn.running_var, "running variance (unbiased)");
  report.put("bn.eval", first_rows(y.value(), shown_rows(r.x)), "y, eval mode (running statistics)");
}

// Each row's mean and (biased) standard deviation, side by side: LayerNorm's promise, checked.
arma::mat mean_and_std(const arma::mat& m) {
  const arma::vec mean = arma::mean(m, 1);
  const arma::mat centred = m.each_col() - mean;
  return arma::join_rows(mean, arma::sqrt(arma::mean(arma::square(centred), 1)));
}

}  // namespace

void forward_views(const Request& r, Report& report) {
  const arma::uword shown = shown_rows(r.x);
  report.put("x", first_rows(r.x, shown), "x");
  if (r.x.n_rows > shown) {
    report.labels["rows"] = (shown == 1 ? "row 1" : "rows 1 to " + std::to_string(shown)) + " of " +
                            std::to_string(r.x.n_rows) + " shown; BatchNorm's column statistics use every row";
  }
  report.put("gamma", r.gamma, "gamma");
  report.put("beta", r.beta, "beta");
  report.put("eps", r.eps, "eps");
  report.put("params", 2.0 * static_cast<double>(r.x.n_cols), "parameters: 2 x d (gamma and beta)");
  view("ln", report, [&](ag::Tape& t, Report& out) {
    const ag::NormSteps steps = ag::layernorm_composed_steps(t.leaf(r.x), t.leaf(r.gamma), t.leaf(r.beta), r.eps);
    put_steps("ln.", steps, shown, out, {"x", "gamma", "beta"}, "ln.check");
    out.put("ln.check", mean_and_std(first_rows(steps.xhat.value(), shown)),
            "check: x̂'s mean and std per row (0 and 1; the std is √(var / (var + ε)), just under 1)");
  });
  view("rms", report, [&](ag::Tape& t, Report& out) {
    put_steps("rms.", ag::rmsnorm_composed_steps(t.leaf(r.x), t.leaf(r.gamma), r.eps), shown, out, {});
  });
  view("bn", report, [&](ag::Tape& t, Report& out) {
    ag::Var x = t.leaf(r.x);
    ag::Var y = ag::batchnorm_composed(x, t.leaf(r.gamma), t.leaf(r.beta), r.eps);
    out.put("bn.mean", ag::mean(x, 0).value(), "mean of each column (over the batch)");
    out.put("bn.var", ag::var(x, 0, false).value(), "variance of each column (biased)");
    out.put("bn.train", first_rows(y.value(), shown), "y, train mode (this batch's statistics)");
    batchnorm_eval(r, t, out);
    out.views["bn"] = {"bn.mean", "bn.var", "bn.train", "bn.running_mean", "bn.running_var", "bn.eval"};
  });
}

}  // namespace page
