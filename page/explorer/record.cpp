#include "page/explorer/record.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <set>

#include "autograd/text.h"
#include "check/op_table.h"
#include "ops/ops.h"

namespace explorer {

namespace {

// The composed norms, by the short names a student writes.
const std::map<std::string, std::string>& aliases() {
  static const std::map<std::string, std::string> a = {
      {"layernorm", "layernorm_composed"}, {"rmsnorm", "rmsnorm_composed"}, {"batchnorm", "batchnorm_composed"}};
  return a;
}

// Rows whose apply makes up an input the language cannot write (labels,
// indices, a mask, a target, a random keep-mask), and what to write instead.
const std::map<std::string, std::string>& refused() {
  static const std::map<std::string, std::string> r = {
      {"embedding", "it reads rows by indices the explorer cannot write; use rows(a, first=1, count=1)"},
      {"masked_fill", "it takes a mask the explorer cannot write; multiply by a matrix of 0s and 1s"},
      {"dropout", "it draws a random mask; multiply by a matrix of 0s and 1s"},
      {"mse", "it takes a target; write mean(square(a - [..]))"},
      {"softmax_cross_entropy", "it takes labels; write -sum(log_softmax(a, dim=1) * [0, 1, 0])"},
      {"bce_with_logits", "it takes targets; write it from sigmoid and log"},
      {"c / a", "write c / a with /"}};
  return r;
}

std::string base_name(const std::string& row) { return row.substr(0, row.find('(')); }

struct Evaluator {
  ag::Tape& tape;
  Recorded& out;

  [[noreturn]] void fail(std::size_t column, const std::string& what) { throw ProgramError(column, what); }

  ag::Var name(const Expr& e) {
    const auto it = out.names.find(e.name);
    if (it != out.names.end()) return it->second;
    std::vector<std::string> defined;
    for (const auto& [known, var] : out.names) defined.push_back(known);
    if (aliases().count(e.name) || std::find(callable_names().begin(), callable_names().end(), e.name) != callable_names().end()) {
      fail(e.column, "'" + e.name + "' is an op: call it, " + e.name + "(...)");
    }
    fail(e.column, "unknown name '" + e.name + "'" + ag::did_you_mean(e.name, defined) +
                       ": a name is defined by an earlier statement");
  }

  ag::Var binary(const Expr& e) {
    const ag::Var a = eval(e.args[0]);
    if (e.name == "^") return ag::pow_scalar(a, e.args[1].literal_value()(0, 0));
    const ag::Var b = eval(e.args[1]);
    if (e.name == "+") return ag::add(a, b);
    if (e.name == "-") return ag::sub(a, b);
    if (e.name == "*") return ag::mul(a, b);
    if (e.name == "/") return ag::div(a, b);
    return ag::matmul(a, b);
  }

  const ag::OpRow& row_of(const Expr& e, const std::string& op, int dim) {
    if (refused().count(op)) fail(e.column, "'" + op + "' cannot be called here: " + refused().at(op));
    const std::string key = dim < 0 ? op : op + "(dim=" + std::to_string(dim) + ")";
    for (const ag::OpRow* row : ag::all_rows()) {
      if (row->name == key) return *row;
    }
    for (const ag::OpRow* row : ag::all_rows()) {
      if (base_name(row->name) != op) continue;
      if (dim < 0) fail(e.column, op + " needs dim=0 (down the columns) or dim=1 (along each row)");
      fail(e.column, op + " takes " + (row->dim < 0 ? std::string("no dim") : "dim=0 or dim=1") + ", not dim=" + std::to_string(dim));
    }
    fail(e.column, "unknown op '" + e.name + "'" + ag::did_you_mean(e.name, callable_names(), 3));
  }

  // The row's constants in its order, from the call's named arguments; only eps has a default.
  std::vector<double> constants_of(const Expr& e, const ag::OpRow& row) {
    std::vector<double> values;
    for (const ag::Constant& c : row.constants) {
      const auto it = std::find_if(e.named.begin(), e.named.end(), [&](const NamedArg& a) { return a.name == c.name; });
      if (it == e.named.end() && std::string(c.name) != "eps") fail(e.column, e.name + " needs " + c.name + "=NUMBER");
      values.push_back(it == e.named.end() ? c.value : it->value);
    }
    for (const NamedArg& a : e.named) {
      const bool known = a.name == "dim" || std::any_of(row.constants.begin(), row.constants.end(),
                                                         [&](const ag::Constant& c) { return a.name == c.name; });
      if (!known) {
        std::string takes;
        for (const ag::Constant& c : row.constants) takes += (takes.empty() ? "" : ", ") + std::string(c.name);
        if (row.dim >= 0) takes += (takes.empty() ? "" : ", ") + std::string("dim");
        fail(a.column, e.name + " has no argument '" + a.name + "'" + (takes.empty() ? " (it takes none)" : " (it takes " + takes + ")"));
      }
    }
    return values;
  }

  std::vector<ag::Var> inputs_of(const Expr& e, const ag::OpRow& row) {
    std::vector<ag::Var> inputs;
    for (const Expr& a : e.args) inputs.push_back(eval(a));
    const std::size_t arity = row.def->arity < 0 ? 2 : std::size_t(row.def->arity);
    const bool per_feature = row.shapes == ag::Shapes::PerFeature && !inputs.empty() && inputs.size() < arity;
    for (std::size_t k = inputs.size(); per_feature && k < arity; ++k) {  // gamma = 1, beta = 0
      inputs.push_back(tape.constant(arma::mat(1, inputs[0].cols(), arma::fill::value(k == 1 ? 1.0 : 0.0)),
                                     k == 1 ? "gamma" : "beta"));
    }
    const bool wrong = row.def->arity < 0 ? inputs.empty() : inputs.size() != arity;
    if (wrong) {
      fail(e.column, e.name + " takes " + (row.def->arity < 0 ? "one or more" : std::to_string(arity)) + " input" +
                         (arity == 1 ? "" : "s") + ", not " + std::to_string(e.args.size()));
    }
    return inputs;
  }

  ag::Var call(const Expr& e) {
    const std::string op = aliases().count(e.name) ? aliases().at(e.name) : e.name;
    int dim = -1;
    for (const NamedArg& a : e.named) {
      if (a.name == "dim" && a.value != 0 && a.value != 1) fail(a.column, "dim is 0 (down the columns) or 1 (along each row)");
      if (a.name == "dim") dim = int(a.value);
    }
    const ag::OpRow& row = row_of(e, op, dim);
    const std::vector<double> constants = constants_of(e, row);
    const std::vector<ag::Var> inputs = inputs_of(e, row);
    try {
      return row.apply(inputs, constants);
    } catch (const ProgramError&) {
      throw;
    } catch (const std::exception& x) {
      fail(e.column, x.what());
    }
  }

  ag::Var eval(const Expr& e) {
    switch (e.kind) {
      case Expr::Kind::Number:
      case Expr::Kind::Matrix: return tape.constant(e.literal, "const");
      case Expr::Kind::Name: return name(e);
      case Expr::Kind::Call: return call(e);
      case Expr::Kind::Neg:
        if (e.is_literal()) return tape.constant(e.literal_value(), "const");
        return ag::neg(eval(e.args[0]));
      case Expr::Kind::Binary:
        try {
          return binary(e);
        } catch (const ProgramError&) {
          throw;
        } catch (const std::exception& x) {
          fail(e.column, x.what());
        }
    }
    fail(e.column, "an expression the explorer does not know");
  }
};

}  // namespace

const std::vector<std::string>& callable_names() {
  static const std::vector<std::string> names = [] {
    std::set<std::string> s;
    for (const ag::OpRow* row : ag::all_rows()) {
      if (!refused().count(row->name)) s.insert(base_name(row->name));
    }
    for (const auto& [alias, row] : aliases()) s.insert(alias);
    return std::vector<std::string>(s.begin(), s.end());
  }();
  return names;
}

Recorded record(const std::vector<Statement>& program, ag::Tape& tape, const std::map<std::string, arma::mat>& given) {
  Recorded out;
  for (const auto& [name, value] : given) {
    out.names[name] = tape.constant(value, name);
    out.labels[out.names[name].id] = name;
  }
  Evaluator ev{tape, out};
  for (const Statement& s : program) {
    if (given.count(s.name)) throw ProgramError(s.column, s.name + " is given; bind your result to another name");
    if (callable_names().end() != std::find(callable_names().begin(), callable_names().end(), s.name)) {
      throw ProgramError(s.column, "'" + s.name + "' is the name of an op; choose another name");
    }
    const bool leaf = s.expr.is_literal();
    const ag::Var v = leaf ? tape.leaf(s.expr.literal_value(), s.name) : ev.eval(s.expr);
    if (leaf) out.leaves.push_back(s.name);
    std::string& label = out.labels[v.id];
    label += (label.empty() ? "" : ", ") + s.name;
    out.names[s.name] = v;
    out.output = v;
    out.output_name = s.name;
  }
  return out;
}

}  // namespace explorer
