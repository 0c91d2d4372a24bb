// Checkpoints: every parameter's name, shape and values in one versioned binary
// file, then the statistics evaluation needs (BatchNorm's running mean and
// variance, "norm1.running_mean"), recorded the same way.
//
// Layout (integers and doubles little-endian):
//   8 bytes  magic "AGRADCKP"
//   u32      format version (kCheckpointVersion)
//   u32 n, n bytes   metadata: free text, "key=value" lines describing the model
//   u32      number of records (parameters, then statistics), then for each:
//            u32 n, n bytes name;  u64 rows;  u64 cols;  rows*cols f64 (column by column)
//   u64      FNV-1a hash of every byte before it
//
// Saving writes a temporary file and renames it over the old one, so a failed
// save leaves the previous checkpoint as it was. Loading parses into
// temporaries, checks everything, and only then writes the model's values, so
// a bad file leaves the live model untouched.
#pragma once

#include <armadillo>

#include <cstdint>
#include <string>
#include <vector>

#include "autograd/parameter.h"
#include "nn/module.h"

namespace ag {

constexpr std::uint32_t kCheckpointVersion = 1;

struct CheckpointEntry {
  std::string name;
  arma::mat value;
};

struct Checkpoint {
  std::string metadata;
  std::vector<CheckpointEntry> params;
};

// The bytes of a checkpoint, and back. `path` only names the file in messages.
// Statistics (BatchNorm's running mean and variance) are records after the parameters.
std::string encode_checkpoint(const std::vector<const Parameter*>& params, const std::string& metadata,
                              const std::vector<Statistic>& statistics = {});
Checkpoint decode_checkpoint(const std::string& bytes, const std::string& path);

// Throws DataError naming the file (and the parameter) for anything wrong.
void save_checkpoint(const std::string& path, const std::vector<Parameter*>& params, const std::string& metadata,
                     const std::vector<Statistic>& statistics = {});
// read_checkpoint refuses anything but a regular file (a FIFO, /dev/zero, a directory) before opening it.
Checkpoint read_checkpoint(const std::string& path);

// read_checkpoint, then checks that names and shapes match `params` (then
// `statistics`) in order, then copies the values in. On any error nothing has changed.
Checkpoint load_checkpoint(const std::string& path, const std::vector<Parameter*>& params);
// The same for a checkpoint already read (`path` names it in messages): the file is not read twice.
void apply_checkpoint(const Checkpoint& ckpt, const std::vector<Parameter*>& params, const std::string& path,
                      const std::vector<Statistic>& statistics = {});

}  // namespace ag
