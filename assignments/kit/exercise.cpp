#include "assignments/kit/exercise.h"

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "assignments/kit/forwards.h"
#include "autograd/rng.h"
#include "autograd/text.h"
#include "check/op_table.h"
#include "ops/ops.h"

namespace kit {

namespace {

using Forward = std::function<arma::mat(const ag::Inputs&)>;

using TapeForward = std::function<ag::Var(const std::vector<ag::Var>&)>;

// The op-table row `name`: the library's own op is the forward.
TapeForward op_table_forward(const ExerciseSpec& s) {
  const ag::OpRow& row = ag::row_named(s.forward);
  if (row.inputs.size() != s.inputs.size()) {
    throw ag::Error("the forward '" + s.forward + "' takes " +
                    std::to_string(row.inputs.size()) + " inputs, the spec lists " + std::to_string(s.inputs.size()));
  }
  std::vector<double> constants = ag::default_constants(row);
  for (std::size_t k = 0; k < constants.size(); ++k) {
    if (std::string(row.constants[k].name) == "eps" && s.eps > 0) constants[k] = s.eps;
  }
  const ag::ApplyFn apply = row.apply;
  return [apply, constants](const std::vector<ag::Var>& in) { return apply(in, constants); };
}

// The engine exercise's graph: c = a b, e = tanh(c) + c, f = e a, y = f f.
// c, a and f are each used twice, so a reverse walk that assigns where it must add (+=) is caught.
ag::Var engine_graph(const std::vector<ag::Var>& in) {
  const ag::Var a = in.at(0), b = in.at(1);
  const ag::Var c = ag::mul(a, b);
  const ag::Var f = ag::mul(ag::add(ag::tanh(c), c), a);
  return ag::mul(f, f);
}

// The forwards a spec names that are not op-table rows, the one table: each as
// the library's ops compute it on the tape (the exact reference) and, but for
// the engine's graph, as forwards.h computes it on plain matrices.
struct NamedForward {
  const char* name;
  std::function<TapeForward(double eps)> on_tape;
  std::function<Forward(double eps)> plain;  // empty: the tape forward's value on a scratch tape
};

const std::vector<NamedForward>& named_forwards() {
  using V = std::vector<ag::Var>;
  static const std::vector<NamedForward> table = {
      {"softmax", [](double) -> TapeForward { return [](const V& in) { return ag::softmax(in.at(0), 1); }; },
       [](double) -> Forward { return [](const ag::Inputs& in) { return softmax_forward(in.at(0)); }; }},
      {"layernorm",
       [](double eps) -> TapeForward { return [eps](const V& in) { return ag::layernorm_fused(in.at(0), in.at(1), in.at(2), eps); }; },
       [](double eps) -> Forward { return [eps](const ag::Inputs& in) { return layernorm_forward(in.at(0), in.at(1), in.at(2), eps); }; }},
      {"rmsnorm", [](double eps) -> TapeForward { return [eps](const V& in) { return ag::rmsnorm_fused(in.at(0), in.at(1), eps); }; },
       [](double eps) -> Forward { return [eps](const ag::Inputs& in) { return rmsnorm_forward(in.at(0), in.at(1), eps); }; }},
      {"linear", [](double) -> TapeForward { return [](const V& in) { return ag::add(ag::matmul(in.at(0), in.at(1)), in.at(2)); }; },
       [](double) -> Forward { return [](const ag::Inputs& in) { return linear_forward(in.at(0), in.at(1), in.at(2)); }; }},
      {"engine_graph", [](double) -> TapeForward { return engine_graph; }, {}},
  };
  return table;
}

const NamedForward* named_forward(const std::string& name) {
  for (const NamedForward& f : named_forwards()) {
    if (name == f.name) return &f;
  }
  return nullptr;
}

TapeForward tape_forward_of(const ExerciseSpec& s) {
  const NamedForward* named = named_forward(s.forward);
  return named ? named->on_tape(s.eps) : op_table_forward(s);
}

// The value of a tape forward, on a scratch tape.
Forward on_scratch_tape(const TapeForward& f) {
  return [f](const ag::Inputs& in) {
    ag::Tape tape;
    std::vector<ag::Var> vars;
    for (const arma::mat& m : in) vars.push_back(tape.leaf(m));
    return arma::mat(f(vars).value());
  };
}

Forward forward_of(const ExerciseSpec& s, const TapeForward& on_tape) {
  const NamedForward* named = named_forward(s.forward);
  return named && named->plain ? named->plain(s.eps) : on_scratch_tape(on_tape);
}

arma::mat draw_input(const ExerciseSpec& s, const CaseSpec& c, const InputSpec& in, ag::Rng& rng) {
  const arma::mat m = rng.uniform(dimension(s, c, in.rows), dimension(s, c, in.cols), in.lo, in.hi);
  const auto offset = c.offsets.find(in.name);
  return offset == c.offsets.end() ? m : arma::mat(m + offset->second);
}

// The matrices named by "sends", from a case's inputs, output and dy.
std::vector<arma::mat> sent_of(const ExerciseSpec& s, const DrawnCase& c) {
  std::vector<arma::mat> sent;
  for (const std::string& w : s.sends) {
    if (w == "y") sent.push_back(c.y);
    else if (w == "dy") sent.push_back(c.dy);
    else if (w == "eps") sent.push_back(arma::mat(1, 1, arma::fill::value(s.eps)));
    else {
      for (std::size_t k = 0; k < s.inputs.size(); ++k) {
        if (s.inputs[k].name == w) sent.push_back(c.inputs[k]);
      }
    }
  }
  return sent;
}

// A JVP exercise's tangents and the transpose identity's u: the tangent sets go to the child,
// one per input with only that input's tangent non-zero, so that each term is graded on its own.
void add_tangents(DrawnCase& c, ag::Rng& rng) {
  for (const arma::mat& in : c.inputs) c.tangents.push_back(rng.uniform(in.n_rows, in.n_cols, -1, 1));
  for (int k = 0; k < 3; ++k) c.cotangents.push_back(rng.uniform(c.y.n_rows, c.y.n_cols, -1, 1));
  for (std::size_t k = 0; k < c.inputs.size(); ++k) {
    for (std::size_t j = 0; j < c.inputs.size(); ++j) {
      c.sent.push_back(j == k ? c.tangents[j] : arma::mat(arma::size(c.inputs[j]), arma::fill::zeros));
    }
  }
}

}  // namespace

Exercise load_exercise(const std::string& assignments, const std::string& name) {
  Exercise ex;
  ex.spec = read_spec((std::filesystem::path(assignments) / name).string());
  try {
    ex.tape_forward = tape_forward_of(ex.spec);
  } catch (const ag::Error& e) {  // no such forward, or a row that takes other inputs: the spec is wrong, so it is named
    std::vector<std::string> names;
    for (const NamedForward& f : named_forwards()) names.push_back(f.name);
    throw ag::DataError(ex.spec.forward_at + ": " + e.what() + " (a forward is " + ag::join(names, ", ") + " or an op-table row)");
  }
  ex.forward = forward_of(ex.spec, ex.tape_forward);
  return ex;
}

std::vector<arma::mat> exact_gradients(const Exercise& ex, const ag::Inputs& inputs, const arma::mat& dy,
                                       bool through_tanh) {
  ag::Tape tape;
  std::vector<ag::Var> leaves, args;
  for (const arma::mat& m : inputs) leaves.push_back(tape.leaf(m));
  args = leaves;
  if (through_tanh) args[0] = ag::tanh(leaves[0]);
  tape.backward(ag::sum(ag::mul(tape.constant(dy), ex.tape_forward(args))));
  std::vector<arma::mat> grads;
  for (const ag::Var& v : leaves) grads.push_back(v.grad());
  return grads;
}

std::vector<DrawnCase> draw_cases(const Exercise& ex, unsigned seed) {
  const ExerciseSpec& s = ex.spec;
  ag::Rng rng(seed);
  std::vector<DrawnCase> cases;
  for (std::size_t k = 0; k < s.cases.size() + (s.tape ? 1 : 0); ++k) {
    const bool tape = k == s.cases.size();
    const CaseSpec& spec_case = s.cases[tape ? 0 : k];
    DrawnCase c;
    c.label = tape ? "on the tape (" + spec_case.label + ")" : spec_case.label;
    c.on_tape = tape;
    for (const InputSpec& in : s.inputs) c.inputs.push_back(draw_input(s, spec_case, in, rng));
    if (tape) {  // loss = sum(w * f(tanh(x), ...)): the student's gradients flow on through the tanh
      c.leaves = c.inputs;
      c.inputs[0] = arma::tanh(c.leaves[0]);
    }
    c.y = ex.forward(c.inputs);
    // A random dL/dy: an all-ones dy would hide mistakes (LayerNorm's true dx is then 0).
    c.dy = rng.uniform(c.y.n_rows, c.y.n_cols, -2, 2);
    c.sent = sent_of(s, c);
    if (s.kind == "jvp") add_tangents(c, rng);
    cases.push_back(c);
  }
  return cases;
}

}  // namespace kit
