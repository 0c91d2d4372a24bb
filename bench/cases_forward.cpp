// Forward mode's overhead (docs/forward-mode.md): on the digits MLP and the
// default tiny GPT, one loss with its gradient (forward + backward), the same
// plus a tangent pass along a random direction of the parameters, and a
// Hessian-vector product (forward, tangent pass, backward over the tangent).
#include <functional>
#include <memory>
#include <vector>

#include "autograd/forward.h"
#include "autograd/tape.h"
#include "bench/cases.h"
#include "data/digits.h"
#include "data/text.h"
#include "nn/gpt.h"
#include "nn/mlp.h"
#include "ops/losses.h"
#include "train/config.h"
#include "train/text_task.h"

namespace bench {

namespace {

enum class Pass { Gradient, Tangent, Hvp };
const char* pass_name(Pass p) { return p == Pass::Gradient ? "grad" : p == Pass::Tangent ? "tangent" : "hvp"; }

// A model and the loss of one fixed batch, recorded on the tape given.
struct Problem {
  std::shared_ptr<ag::Module> model;
  std::function<ag::Var(ag::Tape&)> loss;
};

Result run_pass(const Problem& p, Pass pass, const std::string& name, const std::string& shape, const Plan& plan) {
  ag::Rng rng(3);
  std::vector<arma::mat> v;
  for (ag::Parameter* q : p.model->parameters()) v.push_back(rng.uniform(q->value().n_rows, q->value().n_cols, -1, 1));
  ag::Tape tape;
  double last = 0;
  auto body = [&] {
    tape.clear();
    p.model->zero_grad();
    ag::Var loss = p.loss(tape);
    if (pass == Pass::Gradient) {
      tape.backward(loss);
      last = loss.item();
    } else {
      ag::Var dl = ag::push_tangents(loss, ag::parameter_seeds(tape, p.model->parameters(), v));
      tape.backward(pass == Pass::Hvp ? dl : loss);  // Tangent: the gradient and J v in one step
      last = dl.item();
    }
    keep(&last);
  };
  Result r;
  r.name = name + "_" + pass_name(pass);
  r.shape = shape;
  {  // what the tape holds for backward before it runs: the primal's, plus the tangent's
    ag::Var loss = p.loss(tape);
    if (pass != Pass::Gradient) ag::push_tangents(loss, ag::parameter_seeds(tape, p.model->parameters(), v));
    r.saved_bytes = static_cast<long long>(tape.saved_bytes());
    tape.clear();
  }
  r.time = measure({}, body, plan);
  r.note = pass == Pass::Gradient ? "loss + backward" : pass == Pass::Tangent ? "loss + tangent pass + backward"
                                                                              : "loss + tangent pass + backward over it (H v)";
  return r;
}

Problem digits_problem() {
  auto data = std::make_shared<ag::Dataset>(ag::load_digits());
  ag::Rng rng(7);
  ag::MlpSpec spec;
  spec.sizes = {64, 128, 10};
  spec.norm = ag::Norm::LayerNorm;
  spec.impl = ag::Impl::Fused;
  auto model = std::make_shared<ag::Sequential>(ag::make_mlp(spec, rng));
  const arma::uvec rows = arma::regspace<arma::uvec>(0, 31);
  auto x = std::make_shared<arma::mat>(data->x.rows(rows));
  auto labels = std::make_shared<arma::uvec>(data->labels(rows));
  return {model, [model, x, labels](ag::Tape& t) { return ag::softmax_cross_entropy((*model)(t.constant(*x)), *labels); }};
}

Problem gpt_problem() {
  const ag::RunConfig config = ag::gpt_config();
  const ag::TextData words = ag::load_words();
  const std::vector<ag::TokenLine> lines(words.lines.begin(), words.lines.begin() + 32);
  const std::vector<ag::Sequence> sequences = ag::make_sequences(lines, config.context);
  auto batch = std::make_shared<ag::SequenceBatch>(ag::gather_sequences(sequences, 0, sequences.size()));
  ag::Rng rng(1);
  auto model = std::make_shared<ag::Gpt>(ag::gpt_spec(config, words.vocab.size()), rng);
  return {model, [model, batch](ag::Tape& t) {
            return ag::softmax_cross_entropy(model->logits(t, batch->input, batch->lengths), batch->target);
          }};
}

Case forward_case(const std::string& name, const std::string& shape, Pass pass,
                  std::function<Problem()> make) {
  return {name + "_" + pass_name(pass), shape,
          [=](const Plan& plan) { return run_pass(make(), pass, name, shape, plan); }};
}

}  // namespace

std::vector<Case> forward_cases() {
  std::vector<Case> cases;
  for (Pass pass : {Pass::Gradient, Pass::Tangent, Pass::Hvp}) cases.push_back(forward_case("mlp", "32x64 digits", pass, digits_problem));
  for (Pass pass : {Pass::Gradient, Pass::Tangent, Pass::Hvp}) cases.push_back(forward_case("gpt", "4x64 b32", pass, gpt_problem));
  return cases;
}

}  // namespace bench
