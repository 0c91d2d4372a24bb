// Checkpoints: a round trip, and every way a file can be wrong, each giving a
// clear error that names the file (and the parameter) and leaving the model untouched.
#define BOOST_TEST_MODULE checkpoint
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>

#include "autograd/error.h"
#include "nn/mlp.h"
#include "train/checkpoint.h"
#include "train/model_description.h"
#include "train/trainer.h"

namespace fs = std::filesystem;

namespace {

struct Fixture {
  fs::path dir = fs::temp_directory_path() / ("ag-ckpt-" + std::to_string(::getpid()));
  std::string path = (dir / "model.ckpt").string();
  ag::Sequential saved = mlp(ag::Norm::LayerNorm, 1);
  ag::Sequential live = mlp(ag::Norm::LayerNorm, 2);  // the model loads must not harm
  std::vector<arma::mat> before;

  Fixture() {
    fs::create_directories(dir);
    ag::save_checkpoint(path, saved.parameters(), "format=test\n");
    for (ag::Parameter* p : live.parameters()) before.push_back(p->value());
  }
  ~Fixture() { fs::remove_all(dir); }

  static ag::Sequential mlp(ag::Norm norm, std::uint64_t seed, arma::uword hidden = 8) {
    ag::Rng rng(seed);
    ag::MlpSpec spec;
    spec.sizes = {3, hidden, 2};
    spec.norm = norm;
    return ag::make_mlp(spec, rng);
  }
  std::string bytes() const {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  std::string write(const std::string& contents, const std::string& name = "bad.ckpt") const {
    const std::string p = (dir / name).string();
    std::ofstream(p, std::ios::binary) << contents;
    return p;
  }
  // Loads `file` into the live model; returns the error, and checks nothing changed.
  std::string load_error(const std::string& file) {
    std::string message = "(no error)";
    try {
      ag::load_checkpoint(file, live.parameters());
    } catch (const ag::DataError& e) {
      message = e.what();
    }
    for (std::size_t i = 0; i < before.size(); ++i) {
      BOOST_TEST(arma::approx_equal(live.parameters()[i]->value(), before[i], "absdiff", 0.0),
                 "the live model changed after a failed load of " + file);
    }
    BOOST_TEST(message.find(file) != std::string::npos, message);
    return message;
  }
};

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Flips one byte in the middle of a parameter's values.
std::string with_byte_changed(std::string bytes, std::size_t at) {
  bytes[at] = static_cast<char>(bytes[at] ^ 0x5a);
  return bytes;
}

void put_u32(std::string& bytes, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) bytes[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(checkpoint, Fixture)

BOOST_AUTO_TEST_CASE(round_trip_restores_every_value_bit_for_bit) {
  const ag::Checkpoint c = ag::load_checkpoint(path, live.parameters());
  BOOST_TEST(c.metadata == "format=test\n");
  for (std::size_t i = 0; i < saved.parameters().size(); ++i) {
    BOOST_TEST(arma::approx_equal(live.parameters()[i]->value(), saved.parameters()[i]->value(), "absdiff", 0.0));
    BOOST_TEST(c.params[i].name == saved.parameters()[i]->name());
  }
  BOOST_TEST(bytes().compare(0, 8, "AGRADCKP") == 0);
}

BOOST_AUTO_TEST_CASE(a_failed_save_keeps_the_previous_file) {
  const std::string old = bytes();
  BOOST_CHECK_THROW(ag::save_checkpoint((dir / "no-such-dir" / "model.ckpt").string(), live.parameters(), ""), ag::DataError);
  const std::string blocker = write("a file", "blocker");
  BOOST_CHECK_THROW(ag::save_checkpoint(blocker + "/model.ckpt", live.parameters(), ""), ag::DataError);
  BOOST_TEST(bytes() == old);
  // A good save replaces it, and leaves no temporary files behind.
  ag::save_checkpoint(path, live.parameters(), "");
  BOOST_TEST(bytes() != old);
  int files = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) files += e.path().filename() != "blocker";
  BOOST_TEST(files == 1);
}

BOOST_AUTO_TEST_CASE(empty_file) {
  BOOST_TEST(contains(load_error(write("")), "empty"));
}

BOOST_AUTO_TEST_CASE(wrong_magic) {
  std::string b = bytes();
  b[0] = 'X';
  BOOST_TEST(contains(load_error(write(b)), "not an autograd checkpoint"));
}

BOOST_AUTO_TEST_CASE(garbage_and_text_files) {
  std::string binary(300, '\0');
  for (std::size_t i = 0; i < binary.size(); ++i) binary[i] = static_cast<char>((i * 37 + 11) & 0xff);
  BOOST_TEST(contains(load_error(write(binary)), "not an autograd checkpoint"));
  BOOST_TEST(contains(load_error(write("epoch,train_loss\n1,0.5\n")), "not an autograd checkpoint"));
}

BOOST_AUTO_TEST_CASE(wrong_version) {
  std::string b = bytes();
  put_u32(b, 8, 7);
  const std::string msg = load_error(write(b));
  BOOST_TEST(contains(msg, "version 7 is not supported"), msg);
}

BOOST_AUTO_TEST_CASE(truncated_anywhere) {
  const std::string b = bytes();
  // Cut inside the header, the metadata, a name, a shape, the values, the checksum.
  for (std::size_t keep : {std::size_t(10), std::size_t(14), std::size_t(30), b.size() / 2, b.size() - 3}) {
    const std::string msg = load_error(write(b.substr(0, keep)));
    BOOST_TEST(contains(msg, "truncated"), msg);
  }
  // Cut inside the first parameter's values: the message names it.
  const std::string in_values = load_error(write(b.substr(0, 80)));
  BOOST_TEST(contains(in_values, "fc1.weight"), in_values);
}

BOOST_AUTO_TEST_CASE(a_changed_value_fails_the_checksum) {
  // Offset 70 lies in fc1.weight's values (they start after 32 header bytes, 14 of name, 16 of shape).
  const std::string msg = load_error(write(with_byte_changed(bytes(), 70)));
  BOOST_TEST(contains(msg, "checksum"), msg);
  BOOST_TEST(contains(load_error(write(bytes() + "extra")), "unexpected"));
}

BOOST_AUTO_TEST_CASE(a_huge_claimed_size_is_refused_before_allocating) {
  std::string b = bytes();
  put_u32(b, 12, 0xfffffff0u);  // the metadata length
  BOOST_TEST(contains(load_error(write(b)), "truncated"));
  std::string c = bytes();
  put_u32(c, 12 + 4 + 12, 0x7fffffffu);  // the parameter count (after "format=test\n")
  const std::string msg = load_error(write(c));
  BOOST_TEST(contains(msg, "truncated: the name of parameter 7"), msg);
}

BOOST_AUTO_TEST_CASE(nan_or_infinite_values_are_refused_even_with_a_valid_checksum) {
  for (const double bad : {arma::datum::nan, arma::datum::inf, -arma::datum::inf}) {
    std::vector<ag::Parameter> copies;
    for (const ag::Parameter* p : saved.parameters()) copies.emplace_back(p->name(), p->value());
    copies[2].mutable_value()(0, 1) = bad;
    std::vector<const ag::Parameter*> view;
    for (const ag::Parameter& p : copies) view.push_back(&p);
    const std::string msg = load_error(write(ag::encode_checkpoint(view, "format=test\n")));
    BOOST_TEST(contains(msg, "parameter '" + copies[2].name() + "' holds a NaN or infinite value"), msg);
    BOOST_TEST(!contains(msg, "checksum"), msg);

    // Saving such a model is refused too, and the file already there stays.
    std::vector<ag::Parameter*> mutable_view;
    for (ag::Parameter& p : copies) mutable_view.push_back(&p);
    const std::string before_bytes = bytes();
    std::string save_msg = "(no error)";
    try {
      ag::save_checkpoint(path, mutable_view, "format=test\n");
    } catch (const ag::DataError& e) {
      save_msg = e.what();
    }
    BOOST_TEST(contains(save_msg, "not saved"), save_msg);
    BOOST_TEST(bytes() == before_bytes);
  }
}

BOOST_AUTO_TEST_CASE(wrong_name) {
  std::vector<ag::Parameter*> params = saved.parameters();
  ag::Parameter renamed("fc9.bias", params[1]->value());
  params[1] = &renamed;
  ag::save_checkpoint((dir / "renamed.ckpt").string(), params, "");
  const std::string msg = load_error((dir / "renamed.ckpt").string());
  BOOST_TEST(contains(msg, "parameter 2 is 'fc9.bias' in the file, the model expects 'fc1.bias'"), msg);
  ag::Sequential plain = mlp(ag::Norm::None, 1);  // 4 parameters, the live model has 6
  ag::save_checkpoint((dir / "plain.ckpt").string(), plain.parameters(), "");
  BOOST_TEST(contains(load_error((dir / "plain.ckpt").string()), "holds 4 parameters, the model has 6"));
}

BOOST_AUTO_TEST_CASE(wrong_shape) {
  ag::Sequential wide = mlp(ag::Norm::LayerNorm, 1, 16);
  ag::save_checkpoint((dir / "wide.ckpt").string(), wide.parameters(), "");
  const std::string msg = load_error((dir / "wide.ckpt").string());
  BOOST_TEST(contains(msg, "parameter 'fc1.weight' is 3x16 in the file, the model's is 3x8"), msg);
}

// The metadata a checkpoint of `saved` (3 -> 8 -> 2, layernorm) would carry, with `sizes` and `extra` lines.
std::string description(const std::string& sizes, const std::string& extra = "") {
  return "format=autograd-mlp\nsizes=" + sizes + "\nnorm=layernorm\nimpl=composed\nactivation=relu\n" +
         "dataset=moons\nlabel=\nseed=0\nvalidation_fraction=0.2\n" + extra;
}

std::string description_error(Fixture& f, const std::string& metadata) {
  std::vector<const ag::Parameter*> view;
  for (ag::Parameter* p : f.saved.parameters()) view.push_back(p);
  const ag::Checkpoint ckpt = ag::decode_checkpoint(ag::encode_checkpoint(view, metadata), "m.ckpt");
  try {
    ag::read_description(ckpt, "m.ckpt");
  } catch (const ag::DataError& e) {
    return e.what();
  }
  return "(no error)";
}

// Before: the sizes were only compared after make_mlp had allocated them (3.9 GB for a 611-byte file).
BOOST_AUTO_TEST_CASE(every_described_size_is_checked_against_the_records) {
  BOOST_TEST(description_error(*this, description("3,8,2")) == "(no error)");
  std::string msg = description_error(*this, description("3,50000000,2"));
  BOOST_TEST(msg == "m.ckpt: the model description makes 'fc1.weight' 3x50000000 but the file holds 3x8", msg);
  msg = description_error(*this, description("3,8,2,2"));
  BOOST_TEST(contains(msg, "the file holds no 'fc3.weight'"), msg);
  BOOST_TEST(contains(description_error(*this, description("3,8,999999999")), "'fc2.weight' 8x999999999"));
}

// Before: stoull read "-1" as 2^64-1 and stod stopped at "0.2junk"; 5 got as far as the split.
BOOST_AUTO_TEST_CASE(description_numbers_parse_whole_and_in_range) {
  const std::map<std::string, std::string> bad = {
      {"seed=-1", "seed '-1' is not a whole number"},
      {"seed=12x", "seed '12x'"},
      {"seed=9999999999999999999", "is above 9223372036854775807"},
      {"validation_fraction=5", "validation_fraction '5' is not a number in [0, 1)"},
      {"validation_fraction=0.2junk", "validation_fraction '0.2junk'"},
      {"validation_fraction=-0.1", "validation_fraction '-0.1'"},
      {"validation_fraction=nan", "validation_fraction 'nan'"},
      {"validation_fraction=", "validation_fraction ''"},
  };
  for (const auto& [line, expect] : bad) {
    std::string text = description("3,8,2");
    const std::string key = line.substr(0, line.find('=') + 1);
    const std::size_t at = text.find(key);
    text.replace(at, text.find('\n', at) - at, line);
    const std::string msg = description_error(*this, text);
    BOOST_TEST(contains(msg, "m.ckpt: the checkpoint's model description is damaged ("), line << " -> " << msg);
    BOOST_TEST(contains(msg, expect), line << " -> " << msg);
  }
}

BOOST_AUTO_TEST_CASE(missing_file) {
  BOOST_TEST(contains(load_error((dir / "nothing.ckpt").string()), "cannot open"));
}

BOOST_AUTO_TEST_SUITE_END()
