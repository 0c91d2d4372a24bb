#include "train/lm_memory.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "autograd/error.h"
#include "train/text_task.h"

namespace ag {

double gpt_parameter_count(const GptSpec& s) {
  const double w = static_cast<double>(s.block.width), v = static_cast<double>(s.vocab);
  const double norm = s.block.placement == Placement::None ? 0 : s.block.norm == Norm::RMSNorm ? w : 2 * w;  // gamma (, beta)
  // qkv w x 3w + 3w, proj w x w + w, fc w x 4w + 4w, proj 4w x w + w, two norms.
  const double block = 12 * w * w + 9 * w + 2 * norm;
  return v * w + static_cast<double>(s.context) * w + static_cast<double>(s.layers) * block + norm + w * v + v;
}

double gpt_memory_bytes(const GptSpec& s, const GptWorkload& work) {
  const double w = static_cast<double>(s.block.width), layers = static_cast<double>(s.layers);
  const double per_parameter = work.training ? 5 : 4;
  const double attention = work.sequences * static_cast<double>(s.block.heads) * work.longest * work.longest * 6;
  const double activations = layers * (work.tokens * w * 40 + attention) + work.tokens * static_cast<double>(s.vocab) * 4;
  return 8 * (per_parameter * gpt_parameter_count(s) + activations);
}

GptWorkload lm_workload(const RunConfig& config, const LmData& data) {
  std::size_t longest = 1;
  for (const std::vector<Sequence>* part : {&data.train, &data.validation}) {
    for (const Sequence& s : *part) longest = std::max(longest, s.size());
  }
  const std::size_t batch = std::min<std::size_t>(static_cast<std::size_t>(config.batch_size), data.train.size());
  const double sequences = static_cast<double>(std::max<std::size_t>(batch, std::min<std::size_t>(64, data.validation.size())));
  return {sequences, static_cast<double>(longest), sequences * static_cast<double>(longest), true};
}

GptWorkload sampling_workload(const GptSpec& spec) {
  const double context = static_cast<double>(spec.context);
  return {1, context, context, false};
}

void check_gpt_memory(const GptSpec& s, const GptWorkload& work) {
  const double bytes = gpt_memory_bytes(s, work);
  if (bytes <= kMaxGptBytes) return;
  char line[300];
  std::snprintf(line, sizeof line,
                "the GPT %zux%zu (%zu heads, context %zu, vocab %zu) needs about %.1f GiB of memory (%.3g parameters, "
                "%.0f tokens at a time); the limit is %.0f GiB: use a smaller --width, --layers, --context or --batch-size",
                static_cast<std::size_t>(s.layers), static_cast<std::size_t>(s.block.width),
                static_cast<std::size_t>(s.block.heads), static_cast<std::size_t>(s.context),
                static_cast<std::size_t>(s.vocab), bytes / (1ULL << 30), gpt_parameter_count(s), work.tokens,
                kMaxGptBytes / (1ULL << 30));
  throw DataError(line);
}

}  // namespace ag
