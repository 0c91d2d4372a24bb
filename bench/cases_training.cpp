// One training epoch of the digits MLP: the whole framework at small sizes,
// where per-node overhead and small matmuls matter more than bandwidth.
#include <memory>

#include "autograd/tape.h"
#include "bench/cases.h"
#include "data/digits.h"
#include "ops/losses.h"
#include "nn/mlp.h"
#include "nn/optim.h"

namespace bench {

// 64-128-10 with LayerNorm (fused) after the hidden Linear, ReLU, batch 32,
// Adam (lr 1e-3): all 1797 digits once, 57 steps of forward, loss, backward, step.
Case digits_epoch_case() {
  return {"digits_epoch", "1797x64 b32", [](const Plan& plan) {
            const ag::Dataset data = ag::load_digits();
            ag::Rng rng(7);
            ag::MlpSpec spec;
            spec.sizes = {64, 128, 10};
            spec.norm = ag::Norm::LayerNorm;
            spec.impl = ag::Impl::Fused;
            ag::Sequential model = ag::make_mlp(spec, rng);
            ag::AdamOptions adam;
            adam.lr = 1e-3;
            ag::Adam optimizer(model.parameters(), adam);
            const std::vector<arma::uvec> batches = ag::shuffled_batches(data.size(), 32, rng);
            std::vector<arma::uvec> labels;
            for (const arma::uvec& rows : batches) labels.push_back(data.labels(rows));
            ag::Tape tape;
            tape.keep_intermediate_grads(false);  // as the training loop's tapes (train/shards.cpp)
            double last_loss = 0;
            auto body = [&] {
              for (std::size_t s = 0; s < batches.size(); ++s) {
                tape.clear();
                ag::Var out = model(tape.constant(data.x.rows(batches[s]), "x"));
                ag::Var loss = ag::softmax_cross_entropy(out, labels[s]);
                optimizer.zero_grad();
                tape.backward(loss);
                optimizer.step();
                last_loss = loss.value()(0);
              }
              keep(&last_loss);
            };
            Result r;
            r.name = "digits_epoch";
            r.shape = "1797x64 b32";
            {
              ag::Var out = model(tape.constant(data.x.rows(batches[0]), "x"));
              ag::softmax_cross_entropy(out, labels[0]);
              r.saved_bytes = static_cast<long long>(tape.saved_bytes());  // one step's tape
              tape.clear();
            }
            r.time = measure({}, body, plan);
            r.note = "64-128-10, LayerNorm fused, Adam; saved: one step";
            return r;
          }};
}

}  // namespace bench
