// Loaders against random damage: thousands of mutated checkpoints, CSV files,
// matrix literals and gzip files. Each load either succeeds with sane values or
// throws DataError/ag::Error; never another exception, never a crash (the
// sanitizer run checks reads out of bounds), and a failed load leaves its
// destination as it was. test_checkpoint.cpp and test_datasets.cpp hold the
// hand-written cases (empty, truncated, wrong magic, wrong shape ...).
#define BOOST_TEST_MODULE loaders_fuzz
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "autograd/tape.h"
#include "data/csv.h"
#include "data/atomic_write.h"
#include "data/datasets.h"
#include "data/digits.h"
#include "train/checkpoint.h"

namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("ag-loaders-fuzz-" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
  std::string write(const std::string& name, const std::string& bytes) const {
    const fs::path p = path / name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p.string();
  }
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// One random change: flip, overwrite, insert, delete, truncate, repeat a piece,
// or write a huge or zero 32/64-bit number (sizes and counts live in those).
std::string mutate(std::string b, std::mt19937_64& rng) {
  auto at = [&](std::size_t n) { return n == 0 ? 0 : std::size_t(rng() % n); };
  const char specials[] = {0, '\n', ',', ';', '-', '.', 'e', 'E', '+', ' ', '"', '\r', '\x7f', '\xff', '9'};
  switch (rng() % 8) {
    case 0: if (!b.empty()) b[at(b.size())] ^= char(1u << (rng() % 8)); break;
    case 1: if (!b.empty()) b[at(b.size())] = specials[at(sizeof specials)]; break;
    case 2: b.insert(at(b.size() + 1), 1, char(rng() & 0xff)); break;
    case 3: if (!b.empty()) b.erase(at(b.size()), 1 + at(8)); break;
    case 4: b.resize(at(b.size() + 1)); break;
    case 5: if (!b.empty()) { const std::size_t s = at(b.size()); b.insert(at(b.size()), b.substr(s, 1 + at(32))); } break;
    case 6: case 7: {
      const int width = rng() % 2 ? 4 : 8;
      if (b.size() < std::size_t(width)) break;
      const std::size_t p = at(b.size() - width + 1);
      const std::uint64_t v = rng() % 3 == 0 ? 0 : rng() % 2 ? ~std::uint64_t(0) : (std::uint64_t(1) << (rng() % 63));
      for (int i = 0; i < width; ++i) b[p + i] = char((v >> (8 * i)) & 0xff);
      break;
    }
  }
  return b;
}

std::uint64_t fnv1a(const std::string& s, std::size_t n) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (std::size_t i = 0; i < n; ++i) {
    h ^= static_cast<unsigned char>(s[i]);
    h *= 0x100000001b3ULL;
  }
  return h;
}

// Rewrites the trailing checksum so the parser gets past it to the sizes and counts.
std::string with_valid_checksum(std::string b) {
  if (b.size() < 8) return b;
  const std::uint64_t h = fnv1a(b, b.size() - 8);
  for (int i = 0; i < 8; ++i) b[b.size() - 8 + i] = char((h >> (8 * i)) & 0xff);
  return b;
}

// Runs f; true if it returned, false if it threw DataError or ag::Error.
// Any other exception is a test failure that names the input.
template <class F>
bool loads(F f, const std::string& what) {
  try {
    f();
    return true;
  } catch (const ag::DataError&) {
  } catch (const ag::Error&) {
  } catch (const std::exception& e) {
    BOOST_ERROR(what << ": threw " << typeid(e).name() << " instead of DataError: " << e.what());
  }
  return false;
}

std::vector<ag::Parameter> model() {
  return {ag::Parameter("fc1.weight", arma::mat(3, 4, arma::fill::value(0.25))),
          ag::Parameter("fc1.bias", arma::mat(1, 4, arma::fill::value(-0.5))),
          ag::Parameter("fc2.weight", arma::mat(4, 2, arma::fill::value(1.5)))};
}

}  // namespace

BOOST_AUTO_TEST_CASE(mutated_checkpoints_fail_cleanly_and_leave_the_model_alone) {
  std::vector<ag::Parameter> saved = model();
  const std::string good = ag::encode_checkpoint({&saved[0], &saved[1], &saved[2]}, "hidden=4\nnorm=none\n");
  TempDir tmp;
  std::mt19937_64 rng(7);
  int rejected = 0, loaded = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string bytes = good;
    for (int k = 0, n = 1 + int(rng() % 3); k < n; ++k) bytes = mutate(bytes, rng);
    if (i % 2 == 0) bytes = with_valid_checksum(bytes);
    if (i % 10 != 0) {  // in memory: fast, so many
      if (!loads([&] { ag::decode_checkpoint(bytes, "mutant"); }, "mutant " + std::to_string(i))) ++rejected;
      continue;
    }
    std::vector<ag::Parameter> live = {ag::Parameter("fc1.weight", arma::mat(3, 4, arma::fill::value(9.0))),
                                       ag::Parameter("fc1.bias", arma::mat(1, 4, arma::fill::value(9.0))),
                                       ag::Parameter("fc2.weight", arma::mat(4, 2, arma::fill::value(9.0)))};
    const std::string path = tmp.write("mutant.ckpt", bytes);
    if (loads([&] { ag::load_checkpoint(path, {&live[0], &live[1], &live[2]}); }, "mutant " + std::to_string(i))) {
      ++loaded;
      continue;
    }
    ++rejected;
    for (const ag::Parameter& p : live) {
      BOOST_TEST(arma::all(arma::vectorise(p.value()) == 9.0), "mutant " << i << " changed " << p.name());
    }
  }
  BOOST_TEST(rejected > 2500);  // nearly every change is caught
  BOOST_TEST(loaded >= 0);
}

BOOST_AUTO_TEST_CASE(a_directory_or_device_is_not_a_checkpoint) {
  TempDir tmp;
  std::vector<ag::Parameter> live = model();
  for (const std::string& path : {tmp.path.string(), std::string("/dev/null")}) {
    BOOST_TEST(!loads([&] { ag::load_checkpoint(path, {&live[0], &live[1], &live[2]}); }, path));
  }
  BOOST_TEST(live[0].value()(0, 0) == 0.25);
}

BOOST_AUTO_TEST_CASE(mutated_csv_files_give_data_errors_or_finite_tables) {
  const std::string good = "x1,x2,label\n0.5,-1.25,0\n1e-3,2.5E+2,1\n-0.0,3,2\n4.5,.5,1\n";
  TempDir tmp;
  std::mt19937_64 rng(11);
  int rejected = 0;
  for (int i = 0; i < 600; ++i) {
    std::string text = good;
    for (int k = 0, n = 1 + int(rng() % 3); k < n; ++k) text = mutate(text, rng);
    const std::string path = tmp.write("mutant.csv", text);
    ag::CsvTable table;
    const bool header = i % 2 == 0;
    if (!loads([&] { table = ag::read_csv(path, header); }, "csv mutant " + std::to_string(i) + ": " + text)) {
      ++rejected;
      continue;
    }
    BOOST_TEST(table.values.is_finite(), text);
    BOOST_TEST(table.values.n_rows >= 1u);
    if (header) BOOST_TEST(table.header.size() == table.values.n_cols, text);
    // The same text as a matrix literal: rows separated by ';' instead of newlines.
    std::string literal = text;
    for (char& c : literal) c = c == '\n' ? ';' : c;
    loads([&] { (void)ag::parse_matrix(literal, "--x"); }, "literal: " + literal);
  }
  BOOST_TEST(rejected > 50);
}

BOOST_AUTO_TEST_CASE(binary_huge_and_empty_csv_files_are_refused) {
  TempDir tmp;
  std::mt19937_64 rng(3);
  std::string binary(1 << 16, '\0');
  for (char& c : binary) c = char(rng() & 0xff);
  const std::string huge_header(std::size_t(8) << 20, 'h');  // one 8 MB line with no newline
  const std::string wide_header = "a" + std::string(200000, ',') + "\n";
  const std::vector<std::pair<std::string, std::string>> files = {
      {"binary.csv", binary}, {"huge.csv", huge_header}, {"wide.csv", wide_header},
      {"empty.csv", ""},      {"blank.csv", "\n\n  \n"}, {"nul.csv", std::string("1,2\n3,\0\n", 8)}};
  for (const auto& [name, bytes] : files) {
    const std::string path = tmp.write(name, bytes);
    for (bool header : {true, false}) {
      std::string message;
      try {
        (void)ag::read_csv(path, header);
        BOOST_ERROR(name << " was read as a CSV");
      } catch (const ag::DataError& e) {
        message = e.what();
      }
      BOOST_TEST(message.find(path) != std::string::npos, message);
      BOOST_TEST(message.size() < 400u, name << ": the message is " << message.size() << " characters");
      BOOST_TEST(message.find('\n') == std::string::npos, message);
    }
  }
  BOOST_CHECK_THROW(ag::read_csv(tmp.path.string(), false), ag::DataError);  // a directory
}

BOOST_AUTO_TEST_CASE(mutated_csv_datasets_give_data_errors) {
  const std::string good = "a,b,label\n1,2,0\n3,4,1\n5,6,0\n7,8,1\n";
  TempDir tmp;
  std::mt19937_64 rng(5);
  for (int i = 0; i < 200; ++i) {
    std::string text = good;
    for (int k = 0, n = 1 + int(rng() % 3); k < n; ++k) text = mutate(text, rng);
    const std::string path = tmp.write("mutant.csv", text);
    loads([&] { (void)ag::load_csv_dataset(path, i % 3 == 0 ? "label" : ""); }, "dataset mutant: " + text);
  }
}

BOOST_AUTO_TEST_CASE(damaged_gzip_digits_give_data_errors) {
  const std::string good = slurp(ag::default_digits_path());
  BOOST_TEST_REQUIRE(good.size() > 1000u);
  TempDir tmp;
  std::mt19937_64 rng(13);
  int rejected = 0;
  for (int i = 0; i < 40; ++i) {
    const std::string bytes = i < 8 ? good.substr(0, good.size() * i / 8) : mutate(mutate(good, rng), rng);
    const std::string path = tmp.write("digits.csv.gz", bytes);
    if (!loads([&] { (void)ag::load_digits(path); }, "digits mutant " + std::to_string(i))) ++rejected;
  }
  BOOST_TEST(rejected >= 8);  // at least every truncation
}

BOOST_AUTO_TEST_CASE(a_failed_atomic_write_leaves_the_old_file_and_no_temporary) {
  TempDir tmp;
  const std::string path = tmp.write("metrics.csv", "old contents\n");
  ag::write_file_atomic(path, "new contents\n");
  BOOST_TEST(slurp(path) == "new contents\n");
  BOOST_CHECK_THROW(ag::write_file_atomic("/dev/null/metrics.csv", "x"), ag::DataError);
  BOOST_CHECK_THROW(ag::write_file_atomic(tmp.path.string(), "x"), ag::DataError);  // a directory in the way
  BOOST_TEST(fs::is_directory(tmp.path));
  int files = 0;
  for (const auto& e : fs::directory_iterator(tmp.path)) files += e.is_regular_file() ? 1 : 0;
  BOOST_TEST(files == 1);  // metrics.csv, and no leftover .tmp file
}
