// autograd sample: new lines (words, names, ...) from a GPT checkpoint written
// by `autograd train --model gpt`, one per line on stdout.
#include <iostream>

#include "cli/cli.h"
#include "autograd/error.h"
#include "train/model_description.h"
#include "train/lm_memory.h"
#include "train/sampling.h"

namespace cli {

int cmd_sample(const std::vector<std::string>& args) {
  po::options_description options("options");
  std::string model_path;
  long long count = 10, seed = 0, max_length = 100;
  double temperature = 1.0;
  options.add_options()
      ("model", po::value(&model_path)->required(), "a checkpoint written by autograd train --model gpt (DIR/model.ckpt)")
      ("count", po::value(&count)->default_value(count), "how many lines to print")
      ("temperature", po::value(&temperature)->default_value(temperature, "1"),
       "divides the logits: below 1 likelier characters, above 1 more surprising ones")
      ("seed", po::value(&seed)->default_value(seed), "seed of the draws (the same seed prints the same lines)")
      ("max-length", po::value(&max_length)->default_value(max_length), "stop a line after this many characters");
  po::variables_map vm;
  if (!parse_options("sample", "Prints new lines drawn from a GPT, one character at a time.", options, args, vm)) return 0;
  if (count < 1 || count > 1000000) throw UsageError("--count must be from 1 to 1000000, got " + std::to_string(count));
  if (max_length < 1 || max_length > 100000) {
    throw UsageError("--max-length must be from 1 to 100000, got " + std::to_string(max_length));
  }
  require_non_negative("seed", seed);
  require_positive("temperature", temperature);

  const ag::Checkpoint ckpt = ag::read_checkpoint(model_path);
  const ag::ModelDescription run = ag::read_description(ckpt, model_path, ag::ModelKind::Gpt);  // every size against the records
  ag::check_gpt_memory(run.gpt, ag::sampling_workload(run.gpt));
  ag::Rng init_rng(0);  // the weights come from the file
  ag::Gpt model(run.gpt, init_rng);
  ag::apply_checkpoint(ckpt, model.parameters(), model_path);
  ag::Rng rng(static_cast<std::uint64_t>(seed));
  std::vector<std::string> lines;
  try {
    lines = ag::sample_lines(model, run.vocab, static_cast<std::size_t>(count), temperature, rng,
                             static_cast<std::size_t>(max_length));
  } catch (const ag::DataError& e) {
    throw ag::DataError(model_path + ": " + e.what());  // the model in this file cannot be sampled
  }
  for (const std::string& line : lines) std::cout << line << "\n";
  return 0;
}

}  // namespace cli
