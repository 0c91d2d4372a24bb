// The memory a GPT needs, estimated from its spec before anything is built, so
// that `--layers 48 --width 1024` is one line naming the estimate and the limit,
// not std::bad_alloc after gigabytes (the MLP's check_model_size does the same).
#pragma once

#include <cstddef>

#include "nn/gpt.h"
#include "train/config.h"

namespace ag {

struct LmData;  // train/text_task.h: its task uses this header, so this header does not include it

constexpr double kMaxGptBytes = 4.0 * (1ULL << 30);  // 4 GiB, as for the MLP: far above any model a lesson trains

// Exactly the parameters a Gpt of this spec has (tests compare it with Gpt::parameter_count()).
double gpt_parameter_count(const GptSpec& spec);

// What one forward pass at a time reads: `sequences` of at most `longest` tokens, `tokens` in all.
struct GptWorkload {
  double sequences = 1, longest = 1, tokens = 1;
  bool training = true;  // gradients and Adam's moments too
};

// Rough on purpose, and on the high side: per parameter its value, gradient, the
// tape's copy and Adam's two moments (training) or the checkpoint's copy (sampling); per layer about 40 width-wide
// rows a token (the norms', attention's and the GELU's intermediates and their
// gradients), 6 attention matrices a head (sequence length squared) and the logits.
double gpt_memory_bytes(const GptSpec& spec, const GptWorkload& work);

// Training on `data`: the larger of a batch and an evaluation pass (64 sequences), at the data's longest sequence.
GptWorkload lm_workload(const RunConfig& config, const LmData& data);
// Sampling: one window of the context.
GptWorkload sampling_workload(const GptSpec& spec);

// Throws DataError "the GPT 48x1024 (64 heads, context 1024, vocab 27) needs about
// 22.6 GiB of memory (6.04e+08 parameters, 739 tokens at a time); the limit is 4 GiB: ..."
void check_gpt_memory(const GptSpec& spec, const GptWorkload& work);

}  // namespace ag
