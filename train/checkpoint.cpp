#include "train/checkpoint.h"

#include <cstring>

#include "autograd/tape.h"
#include "data/atomic_write.h"
#include "data/files.h"

namespace ag {

namespace {

const char kMagic[9] = "AGRADCKP";
constexpr std::uint64_t kMaxFileBytes = std::uint64_t(1) << 31;  // 2 GiB: far above any model here

std::uint64_t fnv1a(const char* data, std::size_t n) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (std::size_t i = 0; i < n; ++i) {
    h ^= static_cast<unsigned char>(data[i]);
    h *= 0x100000001b3ULL;
  }
  return h;
}

void put_uint(std::string& out, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void put_string(std::string& out, const std::string& s) {
  put_uint(out, s.size(), 4);
  out += s;
}

// Reads the buffer front to back; every read first checks that the bytes are there.
class Reader {
 public:
  Reader(const std::string& bytes, const std::string& path) : bytes_(bytes), path_(path) {}

  std::size_t remaining() const { return bytes_.size() - pos_; }
  std::size_t position() const { return pos_; }

  std::uint64_t uint(int bytes, const std::string& what) {
    need(static_cast<std::size_t>(bytes), what);
    std::uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v |= std::uint64_t(static_cast<unsigned char>(bytes_[pos_ + i])) << (8 * i);
    pos_ += static_cast<std::size_t>(bytes);
    return v;
  }

  std::string string(const std::string& what) {
    const std::uint64_t n = uint(4, "the length of " + what);
    need(n, what);  // bounded by the file: never allocate more than is there
    std::string s = bytes_.substr(pos_, n);
    pos_ += n;
    return s;
  }

  arma::mat matrix(std::uint64_t rows, std::uint64_t cols, const std::string& what) {
    // rows, cols and rows*cols*8 are each checked against the bytes left, so nothing overflows.
    const std::uint64_t max_values = remaining() / 8;
    if (rows > max_values || cols > max_values || (rows != 0 && cols > max_values / rows)) {
      fail("truncated or corrupted: " + what + " claims " + std::to_string(rows) + "x" + std::to_string(cols) +
           " values but only " + std::to_string(remaining()) + " bytes remain");
    }
    arma::mat m(rows, cols);
    for (double& v : m) {
      const std::uint64_t bits = uint(8, what);
      std::memcpy(&v, &bits, sizeof v);
    }
    return m;
  }

  [[noreturn]] void fail(const std::string& message) const { throw DataError(path_ + ": " + message); }

 private:
  void need(std::uint64_t n, const std::string& what) const {
    if (n > remaining()) {
      fail("truncated: " + what + " needs " + std::to_string(n) + " bytes at offset " + std::to_string(pos_) +
           ", only " + std::to_string(remaining()) + " remain");
    }
  }

  const std::string& bytes_;
  const std::string& path_;
  std::size_t pos_ = 0;
};

void check_header(Reader& in, const std::string& bytes) {
  if (bytes.empty()) in.fail("the file is empty, not a checkpoint");
  if (bytes.size() < 8 || bytes.compare(0, 8, kMagic) != 0) {
    in.fail("not an autograd checkpoint (it does not start with the magic bytes \"AGRADCKP\")");
  }
  in.uint(8, "the magic bytes");
  const std::uint64_t version = in.uint(4, "the format version");
  if (version != kCheckpointVersion) {
    in.fail("checkpoint format version " + std::to_string(version) + " is not supported (this build reads version " +
            std::to_string(kCheckpointVersion) + ")");
  }
}

}  // namespace

std::string encode_checkpoint(const std::vector<const Parameter*>& params, const std::string& metadata,
                              const std::vector<Statistic>& statistics) {
  std::string out(kMagic, 8);
  put_uint(out, kCheckpointVersion, 4);
  put_string(out, metadata);
  put_uint(out, params.size() + statistics.size(), 4);
  const auto put_record = [&out](const std::string& name, const arma::mat& value) {
    put_string(out, name);
    put_uint(out, value.n_rows, 8);
    put_uint(out, value.n_cols, 8);
    for (const double v : value) {
      std::uint64_t bits = 0;
      std::memcpy(&bits, &v, sizeof v);
      put_uint(out, bits, 8);
    }
  };
  for (const Parameter* p : params) put_record(p->name(), p->value());
  for (const Statistic& st : statistics) put_record(st.name, *st.value);
  put_uint(out, fnv1a(out.data(), out.size()), 8);
  return out;
}

Checkpoint decode_checkpoint(const std::string& bytes, const std::string& path) {
  Reader in(bytes, path);
  check_header(in, bytes);
  Checkpoint ckpt;
  ckpt.metadata = in.string("the metadata");
  const std::uint64_t count = in.uint(4, "the parameter count");
  // `count` only bounds the loop (nothing is reserved from it): every read checks the bytes are there.
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::string label = "parameter " + std::to_string(i + 1);
    CheckpointEntry entry;
    entry.name = in.string("the name of " + label);
    const std::string what = "parameter '" + entry.name + "'";
    const std::uint64_t rows = in.uint(8, "the rows of " + what);
    const std::uint64_t cols = in.uint(8, "the columns of " + what);
    entry.value = in.matrix(rows, cols, what);
    ckpt.params.push_back(std::move(entry));
  }
  const std::size_t hashed = in.position();
  const std::uint64_t stored = in.uint(8, "the checksum");
  if (stored != fnv1a(bytes.data(), hashed)) in.fail("corrupted: the checksum does not match the contents");
  if (in.remaining() != 0) in.fail("corrupted: " + std::to_string(in.remaining()) + " unexpected bytes at the end");
  // Intact but useless: a model that diverged would only spread NaN through every later step.
  for (const CheckpointEntry& e : ckpt.params) {
    if (!e.value.is_finite()) in.fail("parameter '" + e.name + "' holds a NaN or infinite value");
  }
  return ckpt;
}

void save_checkpoint(const std::string& path, const std::vector<Parameter*>& params, const std::string& metadata,
                     const std::vector<Statistic>& statistics) {
  for (const Parameter* p : params) {
    if (!p->value().is_finite()) {
      throw DataError(path + ": not saved: parameter '" + p->name() + "' holds a NaN or infinite value");
    }
  }
  for (const Statistic& st : statistics) {
    if (!st.value->is_finite()) throw DataError(path + ": not saved: '" + st.name + "' holds a NaN or infinite value");
  }
  std::vector<const Parameter*> view(params.begin(), params.end());
  write_file_atomic(path, encode_checkpoint(view, metadata, statistics));
}

Checkpoint read_checkpoint(const std::string& path) {
  // stat first: a FIFO, /dev/zero or a directory is refused without being opened.
  return decode_checkpoint(read_regular_file(path, "checkpoint", kMaxFileBytes), path);
}

Checkpoint load_checkpoint(const std::string& path, const std::vector<Parameter*>& params) {
  Checkpoint ckpt = read_checkpoint(path);
  apply_checkpoint(ckpt, params, path);
  return ckpt;
}

void apply_checkpoint(const Checkpoint& ckpt, const std::vector<Parameter*>& params, const std::string& path,
                      const std::vector<Statistic>& statistics) {
  // The model's records, in the file's order: the parameters, then the statistics.
  std::vector<Statistic> records;
  for (Parameter* p : params) records.push_back({p->name(), &p->mutable_value()});
  records.insert(records.end(), statistics.begin(), statistics.end());
  if (ckpt.params.size() != records.size()) {
    throw DataError(path + ": holds " + std::to_string(ckpt.params.size()) + " parameters, the model has " +
                    std::to_string(records.size()) +
                    (statistics.empty() ? "" : " (" + std::to_string(params.size()) + " and " +
                                                   std::to_string(statistics.size()) + " running statistics)"));
  }
  for (std::size_t i = 0; i < records.size(); ++i) {
    const CheckpointEntry& e = ckpt.params[i];
    if (e.name != records[i].name) {
      throw DataError(path + ": parameter " + std::to_string(i + 1) + " is '" + e.name + "' in the file, the model expects '" +
                      records[i].name + "'");
    }
    if (e.value.n_rows != records[i].value->n_rows || e.value.n_cols != records[i].value->n_cols) {
      throw DataError(path + ": " + (i < params.size() ? "parameter '" : "'") + e.name + "' is " + shape_str(e.value) +
                      " in the file, the model's is " +
                      shape_str(*records[i].value));
    }
  }
  // Everything checked: only now does the live model change.
  for (std::size_t i = 0; i < records.size(); ++i) *records[i].value = ckpt.params[i].value;
}

}  // namespace ag
