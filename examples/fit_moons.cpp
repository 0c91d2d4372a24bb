// A program of your own on the installed library: a small LayerNorm MLP
// learns the two moons for 200 Adam steps, then ag::gradcheck confirms the
// tape's gradient of its loss against finite differences.
// Exit status 0 only when the loss fell and the gradient check passed.
#include <iostream>

#include "autograd/gradcheck.h"
#include "data/datasets.h"
#include "nn/mlp.h"
#include "nn/optim.h"
#include "ops/ops.h"

int main() {
  ag::Rng rng(7);
  const ag::Dataset moons = ag::make_moons(200, 0.1, rng);
  ag::Sequential model = ag::make_mlp({{2, 16, 2}, ag::Norm::LayerNorm, ag::Impl::Fused}, rng);
  ag::AdamOptions options;
  options.lr = 0.02;
  ag::Adam adam(model.parameters(), options);

  ag::Tape tape;
  double first = 0, last = 0;
  for (int step = 0; step < 200; ++step) {
    tape.clear();
    ag::Var loss = ag::softmax_cross_entropy(model(tape.constant(moons.x)), moons.labels());
    adam.zero_grad();
    tape.backward(loss);
    adam.step();
    (step == 0 ? first : last) = loss.item();
  }
  const double accuracy = ag::accuracy(model(tape.constant(moons.x)).value(), moons.labels());
  std::cout << "loss " << first << " -> " << last << ", training accuracy " << accuracy << "\n";

  // The loss as a function of the input points: the tape against finite differences.
  const ag::TapeFunction f = [&](ag::Tape&, const std::vector<ag::Var>& in) {
    return ag::softmax_cross_entropy(model(in[0]), moons.labels().head(8));
  };
  const ag::GradcheckReport check = ag::gradcheck(f, {arma::mat(moons.x.head_rows(8))});
  std::cout << check.summary();
  return last < first && accuracy > 0.9 && check.passed ? 0 : 1;
}
