#include "autograd/forward.h"

#include <algorithm>

namespace ag {

namespace {

// The tangent of each node reached so far; a Var with no tape: none.
using Tangents = std::vector<Var>;

void check_seed(Tape& tape, const TangentSeed& s) {
  if (s.at.tape == nullptr || s.tangent.tape == nullptr)
    throw Error("push_tangents: a seed holds an empty Var (never recorded on a tape)");
  s.at.check_live("push_tangents");
  s.tangent.check_live("push_tangents");
  tape.check(s.at, "push_tangents");
  tape.check(s.tangent, "push_tangents: the seed's tangent");
  if (arma::size(s.at.value()) != arma::size(s.tangent.value())) {
    throw Error("push_tangents: the tangent seeded on " + node_name(tape.node(s.at.id), s.at.id) + " is " +
                s.tangent.shape() + "; a tangent has the shape of its node");
  }
}

// Input k's tangent, or a zero constant of its shape when none reached it.
Var input_tangent(Tape& tape, const Tangents& tangents, std::size_t input) {
  if (tangents[input].tape != nullptr) return tangents[input];
  return tape.constant(arma::mat(arma::size(tape.value(input)), arma::fill::zeros), "zero tangent");
}

// While a rule runs the tape names it, and refuses to clear or rewind under it.
class RunningJvp {
 public:
  RunningJvp(Tape& tape, std::size_t id) : tape_(tape), previous_(tape.running_jvp()) { tape.set_running_jvp(id); }
  ~RunningJvp() { tape_.set_running_jvp(previous_); }
  RunningJvp(const RunningJvp&) = delete;
  RunningJvp& operator=(const RunningJvp&) = delete;

 private:
  Tape& tape_;
  std::size_t previous_;
};

// The node's rule applied, its result checked against the node's shape.
Var tangent_of(Tape& tape, std::size_t id, const Tangents& tangents) {
  const Node& n = tape.node(id);
  if (!n.jvp) {
    throw Error("forward mode: " + node_name(n, id) +
                " has no JVP rule (an op without a tangent formula, or a custom op that gave no jvp)");
  }
  JvpArgs args{tape, n, {}, tape.var(id), {}};
  for (std::size_t in : n.inputs) {
    args.x.push_back(tape.var(in));
    args.dx.push_back(input_tangent(tape, tangents, in));
  }
  Var dy;
  try {
    RunningJvp running(tape, id);
    dy = n.jvp(args);
  } catch (const AnomalyError& e) {
    throw AnomalyError(std::string(e.what()) + ", in the tangent of " + node_name(n, id));
  }
  if (dy.tape != &tape) throw Error("forward mode: the JVP rule of " + node_name(n, id) + " returned a Var of another tape");
  tape.check(dy, "forward mode");
  if (arma::size(dy.value()) != arma::size(n.value)) {
    throw Error("forward mode: the JVP rule of " + node_name(n, id) + " returned a " + dy.shape() +
                " tangent; expected " + shape_str(n.value));
  }
  return dy;
}

bool reached(const Node& n, const Tangents& tangents) {
  return std::any_of(n.inputs.begin(), n.inputs.end(),
                     [&](std::size_t in) { return tangents[in].tape != nullptr; });
}

}  // namespace

std::vector<Var> push_tangents(const std::vector<Var>& outputs, const std::vector<TangentSeed>& seeds) {
  if (outputs.empty()) return {};
  Tape& tape = tape_of("push_tangents", outputs[0]);
  std::size_t last = 0;
  for (const Var& out : outputs) {
    tape_of("push_tangents", outputs[0], out);
    last = std::max(last, out.id);
  }
  TangentScope scope(tape);
  Tangents tangents(last + 1);
  std::size_t first = last + 1;
  for (const TangentSeed& s : seeds) {
    check_seed(tape, s);
    if (s.at.id > last) continue;  // after every output: moves none of them
    first = std::min(first, s.at.id);
    if (tangents[s.at.id].tape != nullptr)
      throw Error("push_tangents: " + node_name(tape.node(s.at.id), s.at.id) + " is seeded twice; add the tangents first");
    tangents[s.at.id] = s.tangent;
  }
  // A seeded node keeps its seed: what flows into it from earlier seeds is cut off.
  std::vector<bool> seeded(last + 1, false);
  for (std::size_t id = first; id <= last; ++id) seeded[id] = tangents[id].tape != nullptr;
  for (std::size_t id = first + 1; id <= last; ++id) {
    if (!seeded[id] && reached(tape.node(id), tangents)) tangents[id] = tangent_of(tape, id, tangents);
  }
  std::vector<Var> result;
  for (const Var& out : outputs) result.push_back(input_tangent(tape, tangents, out.id));
  return result;
}

Var push_tangents(Var output, const std::vector<TangentSeed>& seeds) {
  return push_tangents(std::vector<Var>{output}, seeds)[0];
}

std::vector<TangentSeed> parameter_seeds(Tape& tape, const std::vector<Parameter*>& params,
                                         const std::vector<arma::mat>& tangents) {
  if (params.size() != tangents.size()) {
    throw Error("parameter_seeds: " + std::to_string(tangents.size()) + " tangents for " +
                std::to_string(params.size()) + " parameters (one per parameter)");
  }
  std::vector<TangentSeed> seeds;
  for (std::size_t k = 0; k < params.size(); ++k) {
    if (params[k] == nullptr) throw Error("parameter_seeds: parameter " + std::to_string(k) + " is a null pointer");
    if (arma::size(tangents[k]) != arma::size(params[k]->value())) {
      throw Error("parameter_seeds: the tangent of parameter '" + params[k]->name() + "' is " +
                  shape_str(tangents[k]) + "; the parameter is " + shape_str(params[k]->value()));
    }
    const std::shared_ptr<ParameterState> state = params[k]->handle().lock();
    Var tangent;  // one constant per parameter, shared by every node that read it
    for (std::size_t id = 0; id < tape.size(); ++id) {
      const Node& n = tape.node(id);
      if (!n.is_param || n.param.lock() != state) continue;
      if (tangent.tape == nullptr) tangent = tape.constant(tangents[k], "tangent seed");
      seeds.push_back({tape.var(id), tangent});
    }
  }
  return seeds;
}

}  // namespace ag
