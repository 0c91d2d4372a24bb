// Every op's forward-mode rule (its OpDef's JVP, or the node's own), read from
// the op table: on every case of every row, the rule agrees with the op's
// backward through the transpose identity <u, J v> = <J^T u, v> to 1e-12,
// with central differences to 1e-6, and reverse mode runs through it and gets
// its derivative right (a Hessian-vector product). A row without a rule fails
// naming it, and an error of 1e-9 planted in any rule is caught.
#define BOOST_TEST_MODULE jvp_rules
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <cmath>

#include "check/op_table.h"
#include "ops/ops.h"

using namespace ag;
namespace bdata = boost::unit_test::data;

namespace {

std::vector<std::string> op_names() {
  std::vector<std::string> v;
  for (const OpRow& row : op_table()) v.push_back(row.name);
  return v;
}

// A case's values: inputs inside the row's domains, tangents v shaped like them.
struct Point {
  std::vector<arma::mat> x, v;
};

Point draw_point(const OpRow& row, const GradcheckCase& c, std::uint64_t seed) {
  Rng rng(seed);
  Point p{make_inputs(row, c, rng), {}};
  for (const arma::mat& m : p.x) p.v.push_back(rng.uniform(m.n_rows, m.n_cols, -1.0, 1.0));
  return p;
}

// Turns a rule into another (a planted error); identity by default.
using Wrap = std::function<JvpFn(const JvpFn&)>;

// The op recorded on leaves holding x, and its rule applied to tangents v
// (leaves too, so reverse mode may start from any tangent). Throws naming the
// row when its node carries no rule.
struct Recorded {
  std::vector<Var> x;
  Var y, dy;
};

Recorded record_jvp(Tape& t, const OpRow& row, const Point& p, const Wrap& wrap = {}) {
  Recorded r;
  std::vector<Var> dx;
  for (const arma::mat& m : p.x) r.x.push_back(t.leaf(m));
  for (const arma::mat& m : p.v) dx.push_back(t.leaf(m, "tangent"));
  r.y = row.apply(r.x, default_constants(row));
  const Node& n = t.node(r.y.id);
  if (!n.jvp) throw Error(row.name + ": its node '" + n.op + "' carries no forward-mode rule (JVP)");
  const JvpFn rule = wrap ? wrap(n.jvp) : n.jvp;
  r.dy = rule(JvpArgs{t, n, r.x, r.y, dx});
  if (arma::size(r.dy.value()) != arma::size(r.y.value())) {
    throw Error(row.name + ": its rule gave a " + r.dy.shape() + " tangent for a " + r.y.shape() + " output");
  }
  return r;
}

double dot(const arma::mat& a, const arma::mat& b) { return arma::accu(a % b); }
double abs_dot(const arma::mat& a, const arma::mat& b) { return arma::accu(arma::abs(a % b)); }

// |<u, J v> - <J^T u, v>|, relative to the sums of the terms' magnitudes (the
// scale of rounding in either inner product).
double transpose_gap(const OpRow& row, const GradcheckCase& c, std::uint64_t seed, const Wrap& wrap = {}) {
  const Point p = draw_point(row, c, seed);
  Tape t;
  const Recorded r = record_jvp(t, row, p, wrap);
  Rng rng(seed + 1000);
  const arma::mat u = rng.uniform(r.y.rows(), r.y.cols(), -1.0, 1.0);
  const double forward = dot(u, r.dy.value());
  double scale = abs_dot(u, r.dy.value());
  t.backward(r.y, u);
  double reverse = 0, reverse_scale = 0;
  for (std::size_t k = 0; k < p.x.size(); ++k) {
    reverse += dot(r.x[k].grad(), p.v[k]);
    reverse_scale += abs_dot(r.x[k].grad(), p.v[k]);
  }
  scale = std::max(scale, reverse_scale);
  return scale == 0 ? std::abs(forward - reverse) : std::abs(forward - reverse) / scale;
}

// The row's value at x, on a tape of constants.
arma::mat value_at(const OpRow& row, const std::vector<arma::mat>& x) {
  Tape t;
  NoGrad no_grad(t);
  std::vector<Var> vars;
  for (const arma::mat& m : x) vars.push_back(t.constant(m));
  return row.apply(vars, default_constants(row)).value();
}

std::vector<arma::mat> along(const std::vector<arma::mat>& x, const std::vector<arma::mat>& v, double h) {
  std::vector<arma::mat> moved;
  for (std::size_t k = 0; k < x.size(); ++k) moved.push_back(x[k] + h * v[k]);
  return moved;
}

// J v at x from the rule, as a plain matrix.
arma::mat jvp_at(const OpRow& row, const std::vector<arma::mat>& x, const std::vector<arma::mat>& v) {
  Tape t;
  return record_jvp(t, row, Point{x, v}).dy.value();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(jvp_rules)

BOOST_DATA_TEST_CASE(every_rule_is_the_transpose_of_its_backward,
                     bdata::make(op_names()) * bdata::make(std::vector<int>{0, 1, 2}), name, seed) {
  const OpRow& row = row_named(name);
  for (const GradcheckCase& c : row.cases) {
    double gap = 1;
    BOOST_REQUIRE_NO_THROW(gap = transpose_gap(row, c, 100 + seed));
    BOOST_TEST(gap <= 1e-12, case_name(row, c) << ": <u, J v> and <J^T u, v> differ by " << gap << " (relative)");
  }
}

// J v against (f(x + h v) - f(x - h v)) / 2h, with h = 1e-6.
BOOST_DATA_TEST_CASE(every_rule_matches_central_differences, bdata::make(op_names()), name) {
  const OpRow& row = row_named(name);
  const double h = 1e-6;
  for (const GradcheckCase& c : row.cases) {
    const Point p = draw_point(row, c, 7);
    const arma::mat jv = jvp_at(row, p.x, p.v);
    const arma::mat fd = (value_at(row, along(p.x, p.v, h)) - value_at(row, along(p.x, p.v, -h))) / (2 * h);
    const double err = arma::abs(jv - fd).max() / (1.0 + arma::abs(jv).max());
    BOOST_TEST(err <= 1e-6, case_name(row, c) << ": J v is off its central difference by " << err);
  }
}

// Reverse mode through the rule's nodes: the gradient of <w, J v> with respect
// to x, along a direction z, equals the change of <w, J(x) v> as x moves
// along z (central differences of the rule itself, to 1e-5). So each rule is
// differentiable and its derivative right: Hessian-vector products work.
BOOST_DATA_TEST_CASE(reverse_mode_runs_through_every_rule, bdata::make(op_names()), name) {
  const OpRow& row = row_named(name);
  const double h = 1e-5;
  for (const GradcheckCase& c : row.cases) {
    const Point p = draw_point(row, c, 11);
    Rng rng(12);
    const Point z = draw_point(row, c, 13);  // z.v: the direction x moves along
    Tape t;
    const Recorded r = record_jvp(t, row, p);
    const arma::mat w = rng.uniform(r.dy.rows(), r.dy.cols(), -1.0, 1.0);
    BOOST_REQUIRE_NO_THROW(t.backward(r.dy, w));
    double grad_along_z = 0;
    for (std::size_t k = 0; k < p.x.size(); ++k) {
      BOOST_TEST(r.x[k].grad().is_finite(), case_name(row, c) << " input " << k);
      grad_along_z += dot(r.x[k].grad(), z.v[k]);
    }
    const double fd = (dot(w, jvp_at(row, along(p.x, z.v, h), p.v)) - dot(w, jvp_at(row, along(p.x, z.v, -h), p.v))) /
                      (2 * h);
    BOOST_TEST(std::abs(grad_along_z - fd) <= 1e-5 * (1.0 + std::abs(fd)),
               case_name(row, c) << ": reverse over the rule gives " << grad_along_z << ", differences " << fd);
  }
}

// The identity is sharp: every rule, its result scaled by 1 + 1e-9, fails it.
BOOST_DATA_TEST_CASE(a_planted_1e9_error_in_any_rule_is_caught, bdata::make(op_names()), name) {
  const OpRow& row = row_named(name);
  const Wrap planted = [](const JvpFn& rule) {
    return [rule](const JvpArgs& args) { return mul_scalar(rule(args), 1.0 + 1e-9); };
  };
  for (const GradcheckCase& c : row.cases) {
    BOOST_TEST(transpose_gap(row, c, 100) <= 1e-12);
    BOOST_TEST(transpose_gap(row, c, 100, planted) > 1e-12, case_name(row, c) << ": the planted error went unseen");
  }
}

// A row whose node has no rule fails, naming the row and the op.
namespace {
const OpDef no_rule_def{"no_rule", 1, "y = a", "da = dy", "(none)", {}};
}  // namespace

BOOST_AUTO_TEST_CASE(a_row_without_a_rule_fails_naming_it) {
  OpRow row = row_named("neg");
  row.name = "copy of neg";
  row.apply = [](const std::vector<Var>& x, const std::vector<double>&) {
    return x[0].tape->record(no_rule_def, {x[0]}, x[0].value(), [](Tape& t, const Node& n) {
      t.accumulate(n.inputs[0], n.grad);
    });
  };
  try {
    transpose_gap(row, row.cases.front(), 1);
    BOOST_FAIL("a node without a rule was accepted");
  } catch (const Error& e) {
    const std::string what = e.what();
    BOOST_TEST(what.find("copy of neg") != std::string::npos, what);
    BOOST_TEST(what.find("no_rule") != std::string::npos, what);
    BOOST_TEST(what.find("no forward-mode rule") != std::string::npos, what);
  }
}

// Every op in the table carries a rule on its nodes (none is left to fail above).
BOOST_AUTO_TEST_CASE(every_op_node_carries_a_rule) {
  Rng rng(3);
  for (const OpRow& row : op_table()) {
    Tape t;
    std::vector<Var> x;
    for (const arma::mat& m : make_inputs(row, row.cases.front(), rng)) x.push_back(t.leaf(m));
    const Var y = row.apply(x, default_constants(row));
    BOOST_TEST(static_cast<bool>(t.node(y.id).jvp), row.name << " has no forward-mode rule");
  }
}

BOOST_AUTO_TEST_SUITE_END()
