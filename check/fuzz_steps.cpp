#include "check/fuzz_steps.h"

#include "check/op_table.h"

namespace ag::fuzz_detail {

namespace {

// The row's arity, constants and domains, checked on the values the step reads.
bool fits_row(const OpRow& row, const std::vector<const arma::mat*>& x, const std::vector<double>& constants) {
  if (x.size() != row.inputs.size() || constants.size() != row.constants.size()) return false;
  for (std::size_t k = 0; k < x.size(); ++k) {
    if (!accepts(row, k, *x[k], constants)) return false;
  }
  return true;
}

bool within(const arma::mat& value, double limit) {
  return value.is_finite() && (value.is_empty() || arma::abs(value).max() <= limit);
}

}  // namespace

Var apply_step(const FuzzStep& step, const std::vector<Var>& args, const std::vector<FuzzCustomOp>& custom) {
  if (const OpRow* row = find_op(step.op)) return row->apply(args, step.constants);
  for (const FuzzCustomOp& c : custom) {
    if (c.name == step.op) return c.apply(args.at(0));
  }
  throw Error("fuzz: step '" + step.op + "' names no op the fuzzer knows");
}

bool evaluate_step(FuzzStep& step, const std::vector<FuzzStep>& steps, const std::vector<FuzzCustomOp>& custom) {
  if (step.op == "leaf") return true;
  std::vector<const arma::mat*> x;
  for (int a : step.args) x.push_back(&steps.at(a).value);
  const OpRow* row = find_op(step.op);
  if (row != nullptr && !fits_row(*row, x, step.constants)) return false;
  try {
    Tape scratch;
    NoGrad no_grad(scratch);
    std::vector<Var> vars;
    for (const arma::mat* m : x) vars.push_back(scratch.constant(*m));
    step.value = apply_step(step, vars, custom).value();
  } catch (const Error&) {
    return false;  // shapes that do not broadcast, or a custom op that rejects them
  }
  return within(step.value, kMaxValue);
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
