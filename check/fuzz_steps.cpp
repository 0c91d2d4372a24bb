#include "check/fuzz_steps.h"

#include <cmath>

#include "ops/ops.h"

namespace ag::fuzz_detail {

namespace {

using A = const std::vector<Var>&;

std::vector<OpDef> build_table() {
  const Domain any = Domain::Any, bc = Domain::Broadcast, pos = Domain::Positive;
  std::vector<OpDef> table = {
      {"add", 2, bc, -1, [](A x, double) { return add(x[0], x[1]); }},
      {"sub", 2, bc, -1, [](A x, double) { return sub(x[0], x[1]); }},
      {"mul", 2, bc, -1, [](A x, double) { return mul(x[0], x[1]); }},
      {"div", 2, Domain::Divide, -1, [](A x, double) { return div(x[0], x[1]); }},
      {"matmul", 2, Domain::Matmul, -1, [](A x, double) { return matmul(x[0], x[1]); }},
      {"neg", 1, any, -1, [](A x, double) { return neg(x[0]); }},
      {"add_scalar", 1, any, -1, [](A x, double c) { return add_scalar(x[0], c); }},
      {"mul_scalar", 1, any, -1, [](A x, double c) { return mul_scalar(x[0], c); }},
      {"pow_scalar", 1, pos, -1, [](A x, double c) { return pow_scalar(x[0], c); }},
      {"exp", 1, Domain::ExpInput, -1, [](A x, double) { return exp(x[0]); }},
      {"log", 1, pos, -1, [](A x, double) { return log(x[0]); }},
      {"sqrt", 1, pos, -1, [](A x, double) { return sqrt(x[0]); }},
      {"square", 1, any, -1, [](A x, double) { return square(x[0]); }},
      {"tanh", 1, any, -1, [](A x, double) { return tanh(x[0]); }},
      {"sigmoid", 1, any, -1, [](A x, double) { return sigmoid(x[0]); }},
      {"relu", 1, Domain::Kink, -1, [](A x, double) { return relu(x[0]); }},
      {"transpose", 1, any, -1, [](A x, double) { return transpose(x[0]); }},
      {"sum", 1, any, -1, [](A x, double) { return sum(x[0]); }},
      {"mean", 1, any, -1, [](A x, double) { return mean(x[0]); }},
  };
  // The reductions along a dim, once per dim.
  for (int d = 0; d < 2; ++d) {
    const std::string dim = "(dim=" + std::to_string(d) + ")";
    table.push_back({"sum" + dim, 1, any, d, [d](A x, double) { return sum(x[0], d); }});
    table.push_back({"mean" + dim, 1, any, d, [d](A x, double) { return mean(x[0], d); }});
    table.push_back({"var" + dim, 1, any, d, [d](A x, double) { return var(x[0], d); }});
    table.push_back({"var_unbiased" + dim, 1, Domain::TwoAlong, d,
                     [d](A x, double) { return var(x[0], d, true); }});
    table.push_back({"max" + dim, 1, Domain::MaxGap, d, [d](A x, double) { return max(x[0], d); }});
    table.push_back({"logsumexp" + dim, 1, any, d, [d](A x, double) { return logsumexp(x[0], d); }});
  }
  return table;
}

bool broadcasts(const arma::mat& a, const arma::mat& b) {
  auto fits = [](arma::uword x, arma::uword y) { return x == y || x == 1 || y == 1; };
  return fits(a.n_rows, b.n_rows) && fits(a.n_cols, b.n_cols);
}

// The two largest values along `dim` differ by at least `gap` everywhere.
bool max_has_gap(const arma::mat& x, int dim, double gap) {
  const arma::mat sorted = arma::sort(x, "descend", dim);
  if ((dim == 0 ? x.n_rows : x.n_cols) < 2) return true;
  const arma::mat top = dim == 0 ? arma::mat(sorted.row(0) - sorted.row(1))
                                 : arma::mat(sorted.col(0) - sorted.col(1));
  return top.min() >= gap;
}

bool in_domain(const OpDef& op, const std::vector<const arma::mat*>& x, double constant) {
  switch (op.domain) {
    case Domain::Any: return true;
    case Domain::Broadcast: return broadcasts(*x[0], *x[1]);
    case Domain::Divide: return broadcasts(*x[0], *x[1]) && arma::abs(*x[1]).min() >= 0.3;
    case Domain::Matmul: return x[0]->n_cols == x[1]->n_rows;
    case Domain::Positive: {
      // Whole powers are defined everywhere; fractional ones, log and sqrt need x > 0.
      const bool whole = op.name == "pow_scalar" && constant == std::round(constant) && constant > 0;
      return whole || x[0]->min() >= 0.25;
    }
    case Domain::ExpInput: return x[0]->max() <= 4.6;
    case Domain::Kink: return arma::abs(*x[0]).min() >= 0.01;
    case Domain::MaxGap: return max_has_gap(*x[0], op.dim, 0.01);
    case Domain::TwoAlong: return (op.dim == 0 ? x[0]->n_rows : x[0]->n_cols) >= 2;
  }
  return false;
}

}  // namespace

const std::vector<OpDef>& op_defs() {
  static const std::vector<OpDef> table = build_table();
  return table;
}

const OpDef* find_op(const std::string& name) {
  for (const OpDef& op : op_defs()) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

Var apply_step(const FuzzStep& step, const std::vector<Var>& args, const std::vector<FuzzCustomOp>& custom) {
  if (const OpDef* op = find_op(step.op)) return op->apply(args, step.constant);
  for (const FuzzCustomOp& c : custom) {
    if (c.name == step.op) return c.apply(args.at(0));
  }
  throw Error("fuzz: step '" + step.op + "' names no op the fuzzer knows");
}

bool evaluate_step(FuzzStep& step, const std::vector<FuzzStep>& steps, const std::vector<FuzzCustomOp>& custom) {
  if (step.op == "leaf") return true;
  std::vector<const arma::mat*> x;
  for (int a : step.args) x.push_back(&steps.at(a).value);
  const OpDef* op = find_op(step.op);
  if (op != nullptr && (int(x.size()) != op->arity || !in_domain(*op, x, step.constant))) return false;
  try {
    Tape scratch;
    NoGrad no_grad(scratch);
    std::vector<Var> vars;
    for (const arma::mat* m : x) vars.push_back(scratch.constant(*m));
    step.value = apply_step(step, vars, custom).value();
  } catch (const std::exception&) {
    return false;  // e.g. a custom op that rejects this shape
  }
  return step.value.is_finite() && (step.value.n_elem == 0 || arma::abs(step.value).max() <= kMaxValue);
}

bool evaluate_graph(FuzzGraph& graph) {
  for (std::size_t k = 0; k < graph.steps.size(); ++k) {
    for (int a : graph.steps[k].args) {
      if (a < 0 || std::size_t(a) >= k) return false;
    }
    if (!evaluate_step(graph.steps[k], graph.steps, graph.custom_ops)) return false;
  }
  return !graph.steps.empty();
}

}  // namespace ag::fuzz_detail
