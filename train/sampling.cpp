#include "train/sampling.h"

#include <algorithm>
#include <cmath>

#include "autograd/error.h"

namespace ag {

namespace {
// A draw from softmax(logits / temperature): the inverse of the cumulative sum at one uniform number.
// In log space, shifted first: (logits - max) / temperature is at most 0 for any temperature,
// so a subnormal temperature gives -inf (probability 0) for all but the likeliest token,
// never inf - inf. The caller refuses logits that are not finite (weights that overflow).
arma::uword draw(const arma::rowvec& logits, double temperature, Rng& rng) {
  const arma::rowvec p = arma::exp((logits - logits.max()) / temperature);
  const double u = rng.uniform() * arma::accu(p);
  double cumulative = 0;
  for (arma::uword k = 0; k < p.n_elem; ++k) {
    cumulative += p(k);
    if (u < cumulative) return k;
  }
  return p.index_max();  // u rounded up to the total: the likeliest token
}
}  // namespace

std::vector<std::string> sample_lines(Gpt& model, const Vocabulary& vocab, std::size_t count, double temperature,
                                      Rng& rng, std::size_t max_chars) {
  if (!(temperature > 0) || !std::isfinite(temperature)) throw Error("sample: the temperature must be a positive number");
  const bool was_training = model.training();
  model.eval();
  const arma::uword context = model.spec().context;
  std::vector<std::string> lines;
  Tape tape;
  for (std::size_t i = 0; i < count; ++i) {
    std::vector<arma::uword> tokens{kBoundary};
    while (tokens.size() <= max_chars) {
      const std::size_t n = std::min<std::size_t>(tokens.size(), context);  // the last `context` tokens
      const arma::uvec window(std::vector<arma::uword>(tokens.end() - n, tokens.end()));
      tape.clear();
      NoGrad no_grad(tape);
      const arma::mat& logits = model.logits(tape, window, {n}).value();
      if (!logits.is_finite()) {
        throw DataError("the model's logits are not finite (NaN or inf): its weights overflow double precision");
      }
      const arma::uword next = draw(logits.row(logits.n_rows - 1), temperature, rng);
      if (next == kBoundary) break;
      tokens.push_back(next);
    }
    lines.push_back(vocab.decode(tokens));
  }
  model.train(was_training);
  return lines;
}

}  // namespace ag
