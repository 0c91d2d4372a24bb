// What a GPT checkpoint carries besides its weights (train/checkpoint.h holds
// both): the model's shape, the vocabulary and the data settings, as
// "key=value" lines, so `autograd sample` needs nothing but the file.
#pragma once

#include <string>

#include "train/checkpoint.h"
#include "train/lm_trainer.h"

namespace ag {

struct LmDescription {
  LmConfig config;
  GptSpec spec;
  Vocabulary vocab;
};

// format=autograd-gpt, then the spec, the vocabulary (its UTF-8 bytes in hex) and the data settings.
std::string describe_lm_run(const LmConfig& config, const GptSpec& spec, const Vocabulary& vocab);

// Throws DataError naming the file for anything missing, out of range or not
// matching the file's own weight records (checked before a model is built, so
// a forged description cannot make it allocate more than the file holds).
LmDescription read_lm_description(const Checkpoint& ckpt, const std::string& path);

// True when the checkpoint's metadata says it holds a GPT.
bool is_lm_checkpoint(const Checkpoint& ckpt);

}  // namespace ag
