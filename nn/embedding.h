// Embedding: a table of learned rows, one per token (or position), looked up
// by index; PyTorch's nn.Embedding. Its gradient is scatter-added into the
// rows that were looked up (ops/indexing.h's embedding), so a token that
// appears twice in a batch gets both contributions.
#pragma once

#include <string>

#include "autograd/rng.h"
#include "nn/module.h"

namespace ag {

class Embedding : public Module {
 public:
  // table: count x width, drawn from N(0, sd^2). Parameter "<name>.weight". Throws Error for an
  // empty table or an sd that is negative, NaN or infinite, before anything is drawn.
  Embedding(const std::string& name, arma::uword count, arma::uword width, Rng& rng, double sd);

  // The rows of `ids`, in order: ids.n_elem x width. An id >= count throws.
  Var lookup(Tape& tape, const arma::uvec& ids);
  // The Module form: x is a column of whole numbers (the ids) on the tape.
  Var forward(Var x) override;
  std::vector<Parameter*> parameters() override { return {&table}; }
  std::string describe() const override;

  Parameter table;
};

}  // namespace ag
