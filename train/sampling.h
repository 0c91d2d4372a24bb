// Sampling new lines from a trained character-level GPT (autograd sample, lesson 13).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "autograd/rng.h"
#include "data/text.h"
#include "nn/gpt.h"

namespace ag {

// New lines from the model: each starts at the boundary and ends at the next
// one (or after max_chars characters); logits / temperature, drawn from rng
// (in log space: finite at any positive temperature). Throws DataError when the
// model's logits are not finite (weights that overflow).
std::vector<std::string> sample_lines(Gpt& model, const Vocabulary& vocab, std::size_t count, double temperature,
                                      Rng& rng, std::size_t max_chars);

}  // namespace ag
