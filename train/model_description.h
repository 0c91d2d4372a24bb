// What a checkpoint carries about its model besides the weights
// (train/checkpoint.h holds both), as "key=value" lines: the model's kind and
// shape, a GPT's vocabulary, and the data settings (dataset, label column,
// seed, validation fraction), so `autograd eval` can rebuild the same model
// and the same split, and `autograd sample` needs nothing but the file.
//
//   format=autograd-mlp   sizes, norm, impl, activation, dataset, label, seed, validation_fraction
//   format=autograd-gpt   vocab, vocabulary_hex (its UTF-8 bytes in hex), context, layers, heads,
//                         width, placement, norm, impl, dropout, dataset, seed, validation_fraction
//
// The page (page/) compiles this file to WebAssembly: it uses nn/ and data/text only.
#pragma once

#include <string>

#include "data/text.h"
#include "nn/gpt.h"
#include "nn/mlp.h"
#include "train/checkpoint.h"
#include "train/config.h"

namespace ag {

struct ModelDescription {
  ModelKind kind = ModelKind::Mlp;
  RunConfig config;  // the model's options and the data settings, as it was trained
  MlpSpec mlp;       // kind Mlp
  GptSpec gpt;       // kind Gpt
  Vocabulary vocab;  // kind Gpt
};

std::string describe_model(const RunConfig& config, const MlpSpec& spec);
std::string describe_model(const RunConfig& config, const GptSpec& spec, const Vocabulary& vocab);

// Throws DataError naming the file for anything missing, out of range or not
// matching the file's own weight records (checked before a model is built, so
// a forged description cannot make it allocate more than the file holds).
ModelDescription read_description(const Checkpoint& ckpt, const std::string& path);
// The same, refusing a checkpoint of another kind of model ("not a GPT checkpoint").
ModelDescription read_description(const Checkpoint& ckpt, const std::string& path, ModelKind expected);

}  // namespace ag
