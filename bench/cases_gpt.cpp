// One training step of the default tiny GPT (`autograd train --model gpt`):
// forward, cross-entropy, backward, gradient clipping and an AdamW step, on a
// fixed batch of 32 words. Hundreds of small nodes per step (per sequence,
// per head), so it measures the framework's overhead at a transformer's shape.
#include <vector>

#include "autograd/tape.h"
#include "bench/cases.h"
#include "data/text.h"
#include "nn/gpt.h"
#include "nn/optim.h"
#include "ops/losses.h"
#include "train/text_task.h"

namespace bench {

namespace {

constexpr std::size_t kGptBatch = 32;

// The first 32 words of the list, in the file's order, framed by the boundary:
// the peer builds the same batch from the same file without our split.
ag::SequenceBatch first_words(const ag::TextData& words, arma::uword context) {
  const std::vector<ag::TokenLine> lines(words.lines.begin(), words.lines.begin() + kGptBatch);
  const std::vector<ag::Sequence> sequences = ag::make_sequences(lines, context);
  return ag::gather_sequences(sequences, 0, sequences.size());
}

}  // namespace

// The defaults of `autograd train --model gpt` (ag::gpt_config()): 4 pre-LN blocks
// of width 64 with 4 heads, context 32, composed LayerNorm, softmax and GELU, AdamW
// (lr 3e-3, weight decay 0.01), gradient norm clipped to 1; `fused`: the same
// with --impl fused (fused LayerNorm, softmax and GELU, like PyTorch's kernels).
Case gpt_step_case(bool fused) {
  const std::string shape = fused ? "4x64 b32 fused" : "4x64 b32";
  return {"gpt_step", shape, [fused, shape](const Plan& plan) {
            ag::RunConfig config = ag::gpt_config();
            config.impl = fused ? ag::Impl::Fused : ag::Impl::Composed;
            const ag::TextData words = ag::load_words();
            const ag::SequenceBatch batch = first_words(words, static_cast<arma::uword>(config.context));
            ag::Rng rng(1);
            ag::Gpt model(ag::gpt_spec(config, words.vocab.size()), rng);
            ag::AdamOptions adam;
            adam.lr = config.lr;
            adam.weight_decay = config.weight_decay;
            ag::AdamW optimizer(model.parameters(), adam);
            ag::Tape tape;
            tape.keep_intermediate_grads(false);  // as the training loop's tapes (train/shards.cpp)
            double last_loss = 0;
            auto body = [&] {
              tape.clear();
              optimizer.zero_grad();
              ag::Var loss = ag::softmax_cross_entropy(model.logits(tape, batch.input, batch.lengths), batch.target);
              tape.backward(loss);
              ag::clip_grad_norm(model.parameters(), config.clip);
              optimizer.step();
              last_loss = loss.value()(0);
              keep(&last_loss);
            };
            Result r;
            r.name = "gpt_step";
            r.shape = shape;
            ag::softmax_cross_entropy(model.logits(tape, batch.input, batch.lengths), batch.target);
            r.saved_bytes = static_cast<long long>(tape.saved_bytes());  // one step's tape
            tape.clear();
            r.time = measure({}, body, plan);
            r.note = std::to_string(batch.target.n_elem) + " tokens, " + ag::impl_name(config.impl) +
                     " LN, softmax and GELU, AdamW; saved: one step";
            return r;
          }};
}

}  // namespace bench
