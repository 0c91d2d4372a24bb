// Character-level text: the words list, FILE.txt and its hostile inputs, the
// seeded split by line, the framing into sequences and the bigram baseline.
#define BOOST_TEST_MODULE text
#include <boost/test/unit_test.hpp>

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "autograd/tape.h"
#include "autograd/error.h"
#include "data/text.h"
#include "train/text_task.h"

namespace fs = std::filesystem;
namespace tt = boost::test_tools;

namespace {

fs::path scratch() {
  static const fs::path dir = fs::temp_directory_path() / ("ag-text-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

std::string write(const std::string& name, const std::string& bytes) {
  const fs::path p = scratch() / name;
  std::ofstream(p, std::ios::binary) << bytes;
  return p.string();
}

// The DataError message load_text_file throws for `bytes` ("" when it loads).
std::string error_for(const std::string& bytes) {
  try {
    ag::load_text_file(write("hostile.txt", bytes));
  } catch (const ag::DataError& e) {
    return e.what();
  }
  return "";
}

std::string error_for_path(const std::string& path) {
  try {
    ag::load_text_file(path);
  } catch (const ag::DataError& e) {
    return e.what();
  }
  return "";
}

std::string text_of(const ag::TextData& d, std::size_t line) {
  return d.vocab.decode(d.lines[line]);
}

struct Cleanup {
  ~Cleanup() { fs::remove_all(scratch()); }
};

}  // namespace

BOOST_GLOBAL_FIXTURE(Cleanup);

BOOST_AUTO_TEST_CASE(the_words_are_lowercase_a_to_z_each_once) {
  const ag::TextData d = ag::load_words();
  BOOST_TEST(d.lines.size() == 63875u);  // of wamerican's 104,334 lines
  BOOST_TEST(d.vocab.size() == 27u);     // a-z and the boundary
  BOOST_TEST(d.vocab.chars.front() == "a");
  BOOST_TEST(d.vocab.chars.back() == "z");
  BOOST_TEST(d.longest() == 22u);
  std::set<ag::TokenLine> distinct(d.lines.begin(), d.lines.end());
  BOOST_TEST(distinct.size() == d.lines.size());
}

BOOST_AUTO_TEST_CASE(the_word_filter_drops_capitals_possessives_accents_and_repeats) {
  const ag::TextData d = ag::load_words(write("words", "apple\nApple\nbob's\ncaf\xc3\xa9\napple\n\nzed"));
  BOOST_TEST_REQUIRE(d.lines.size() == 2u);
  BOOST_TEST(text_of(d, 0) == "apple");
  BOOST_TEST(text_of(d, 1) == "zed");
  BOOST_TEST(d.vocab.size() == 7u);  // a d e l p z + boundary
}

BOOST_AUTO_TEST_CASE(a_missing_word_list_names_the_package) {
  try {
    ag::load_words((scratch() / "no-such-words").string());
    BOOST_FAIL("no error");
  } catch (const ag::DataError& e) {
    BOOST_TEST(std::string(e.what()).find("apt-get install wamerican") != std::string::npos, e.what());
  }
}

BOOST_AUTO_TEST_CASE(a_text_file_is_utf8_lines_and_the_last_needs_no_newline) {
  const ag::TextData d = ag::load_text_file(write("names.txt", "ana\r\n\nzo\xc3\xab\njo e"));
  BOOST_TEST_REQUIRE(d.lines.size() == 3u);
  BOOST_TEST(text_of(d, 0) == "ana");
  BOOST_TEST(text_of(d, 1) == "zo\xc3\xab");
  BOOST_TEST(d.lines[1].size() == 3u);  // the two bytes of e-diaeresis are one character
  BOOST_TEST(text_of(d, 2) == "jo e");  // the last line, without its newline
  BOOST_TEST(d.vocab.chars.size() == 8u);  // ' ' a e j n o z and the e-diaeresis
}

BOOST_AUTO_TEST_CASE(hostile_text_files_give_one_clear_line) {
  BOOST_TEST(error_for("").find("the file is empty") != std::string::npos);
  BOOST_TEST(error_for("\n\n\r\n").find("only empty lines") != std::string::npos);
  BOOST_TEST(error_for(std::string("ok\nab\0cd\n", 9)).find("line 2, character 3 (byte 3) is not UTF-8 text: byte 0x00 "
                                                            "(a control character, U+0000)") != std::string::npos);
  BOOST_TEST(error_for("ok\n\xff\xfe\n").find("line 2, character 1 (byte 1) is not UTF-8 text: byte 0xff (never in UTF-8)") !=
             std::string::npos);
  BOOST_TEST(error_for("caf\xc3").find("character 4 (byte 4) is not UTF-8 text: byte 0xc3 (a UTF-8 sequence cut short)") !=
             std::string::npos);  // a character cut off
  BOOST_TEST(error_for(std::string(ag::kMaxLineChars + 1, 'a')).find("line 1 is longer than 10000 characters") !=
             std::string::npos);
  BOOST_TEST(error_for(std::string(ag::kMaxLineChars, 'a')) == "");  // the limit itself is fine
  std::string many;
  for (int c = 0x100; c < 0x100 + 1001; ++c) {  // 1001 distinct two-byte characters
    many += static_cast<char>(0xC0 | (c >> 6));
    many += static_cast<char>(0x80 | (c & 0x3F));
  }
  BOOST_TEST(error_for(many).find("more than 1000 distinct characters; at most 1000") != std::string::npos);
  for (const std::string& e : {error_for(""), error_for("\xff")}) BOOST_TEST(e.find('\n') == std::string::npos);
  BOOST_CHECK_THROW(ag::load_text_file((scratch() / "missing.txt").string()), ag::DataError);
  BOOST_CHECK_THROW(ag::load_text_file(scratch().string()), ag::DataError);
}

// Before: utf8_length checked only the lead byte's range and the continuation
// bytes, so all of these loaded and `sample` printed them back.
BOOST_AUTO_TEST_CASE(strict_utf8_refuses_surrogates_code_points_above_u10ffff_overlongs_and_c1_controls) {
  const std::pair<const char*, const char*> cases[] = {
      {"ok\nab\xed\xa0\x80\n", "line 2, character 3 (byte 3) is not UTF-8 text: bytes 0xed 0xa0 0x80 (a UTF-16 surrogate, U+D800)"},
      {"ok\n\xf4\x90\x80\x80", "line 2, character 1 (byte 1) is not UTF-8 text: bytes 0xf4 0x90 0x80 0x80 (above U+10FFFF, the last code point)"},
      {"a\xe0\x80\xaf", "line 1, character 2 (byte 2) is not UTF-8 text: bytes 0xe0 0x80 0xaf (an overlong encoding of U+002F)"},
      {"\xc3\xa9\xf0\x80\x80\xaf", "line 1, character 2 (byte 3) is not UTF-8 text: bytes 0xf0 0x80 0x80 0xaf (an overlong encoding of U+002F)"},
      {"x\n\ny\xc2\x9b[2J", "line 3, character 2 (byte 2) is not UTF-8 text: bytes 0xc2 0x9b (a C1 control character, U+009B)"},
      {"esc\x1b[8m", "line 1, character 4 (byte 4) is not UTF-8 text: byte 0x1b (a control character, U+001B)"},
      {"\xc0\xaf", "bytes 0xc0 0xaf (an overlong encoding of U+002F)"},
      {"\xf8\x88\x80\x80\x80", "byte 0xf8 (never in UTF-8)"},
      {"a\x80", "byte 0x80 (a continuation byte without a lead byte)"},
  };
  for (const auto& [bytes, expected] : cases) {
    const std::string e = error_for(bytes);
    BOOST_TEST(e.find(expected) != std::string::npos, "[" << e << "] lacks [" << expected << "]");
    BOOST_TEST(e.find("is not UTF-8 text") != std::string::npos, e);
    BOOST_TEST(e.find('\n') == std::string::npos, e);
  }
}

// The first and last code point of every length, either side of the surrogates, and the tab load.
BOOST_AUTO_TEST_CASE(every_well_formed_utf8_length_boundary_is_text) {
  const std::string edges = "\t~\xc2\xa0\xdf\xbf\xe0\xa0\x80\xed\x9f\xbf\xee\x80\x80\xef\xbf\xbf\xf0\x90\x80\x80\xf4\x8f\xbf\xbf";
  BOOST_TEST(error_for(edges) == "");
  const ag::TextData d = ag::load_text_file(write("edges.txt", edges));
  BOOST_TEST(d.lines[0].size() == 10u);
  BOOST_TEST(text_of(d, 0) == edges);  // decoded back byte for byte
}

// Before: load_text_file opened a FIFO and waited for a writer forever, and read /dev/zero to its size limit.
BOOST_AUTO_TEST_CASE(a_fifo_a_device_or_a_directory_is_refused_without_being_opened) {
  const std::string fifo = (scratch() / "fifo.txt").string();
  BOOST_TEST_REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const std::pair<std::string, std::string> cases[] = {
      {fifo, fifo + ": is a FIFO (a named pipe), not a text file"},
      {"/dev/zero", "/dev/zero: is a character device, not a text file"},
      {scratch().string(), scratch().string() + ": is a directory, not a text file"},
  };
  for (const auto& [path, expected] : cases) {
    try {
      ag::load_text_file(path);
      BOOST_FAIL(path + " loaded");
    } catch (const ag::DataError& e) {
      BOOST_TEST(std::string(e.what()) == expected);
    }
  }
  fs::remove(fifo);
}

// A sparse file: its size is refused before anything is read or allocated.
BOOST_AUTO_TEST_CASE(a_text_file_over_128_mib_is_refused_by_its_size_before_it_is_read) {
  const std::string big = write("big.txt", "");
  fs::resize_file(big, (std::uintmax_t(128) << 20) + 1);
  BOOST_TEST(error_for_path(big) == big + ": 134217729 bytes; a text file is limited to 128 MiB");
  fs::remove(big);
}

namespace {
// A seeded 16 MiB file of made-up lowercase names, 3 to 12 letters a line.
std::string sixteen_mib_of_names() {
  std::string text;
  std::uint64_t x = 88172645463325252ULL;  // xorshift64: the same file every run
  while (text.size() < (std::size_t(16) << 20)) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    for (std::uint64_t n = 3 + x % 10, k = 0; k < n; ++k) text += static_cast<char>('a' + (x >> (5 * k + 4)) % 26);
    text += '\n';
  }
  return write("sixteen.txt", text);
}

#if !defined(__SANITIZE_ADDRESS__)
std::uint64_t vm_size_bytes() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmSize:", 0) == 0) return std::stoull(line.substr(7)) * 1024;  // kB
  }
  return 0;
}
#endif
}  // namespace

// Before: a string per character while loading and two arma::uvec per line
// (about 160 bytes of memory a byte of text): 16 MiB reached 2.6 GiB before the
// first step. Now the whole of a run's data (prepare_lm_data: the lines, the
// split, the training pieces and the bigram) fits in the budget docs/files.md
// states, 24 bytes a byte of text, checked as an address-space limit in a child
// process. AddressSanitizer reserves terabytes of address space and cannot run
// under such a limit, so the sanitizer tree runs the same preparation unlimited.
BOOST_AUTO_TEST_CASE(a_16_mib_text_file_is_prepared_within_24_bytes_a_byte) {
  const std::string path = sixteen_mib_of_names();
  const std::uint64_t budget = std::uint64_t(24) * fs::file_size(path);
  const pid_t child = ::fork();
  BOOST_TEST_REQUIRE(child >= 0);
  if (child == 0) {
#if !defined(__SANITIZE_ADDRESS__)
    const rlim_t most = vm_size_bytes() + budget;
    const rlimit limit{most, most};
    if (::setrlimit(RLIMIT_AS, &limit) != 0) ::_exit(3);
#endif
    try {
      ag::RunConfig config = ag::gpt_config();
      config.dataset = path;
      const ag::LmData data = ag::prepare_lm_data(config);
      ::_exit(data.text.lines.size() > 1000000 && data.bigram_val_loss > 3 ? 0 : 4);
    } catch (const std::bad_alloc&) {
      ::_exit(5);
    } catch (...) {
      ::_exit(6);
    }
  }
  int status = 0;
  BOOST_TEST_REQUIRE(::waitpid(child, &status, 0) == child);
  BOOST_TEST(WIFEXITED(status));
  BOOST_TEST(WEXITSTATUS(status) == 0, "exit " << WEXITSTATUS(status) << " (5: out of memory within " << (budget >> 20)
                                               << " MiB)");
}

BOOST_AUTO_TEST_CASE(the_split_is_by_line_seeded_and_covers_every_line) {
  const ag::TextData d = ag::load_text_file(write("ten.txt", "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n"));
  ag::Rng r1(7), r2(7), r3(8);
  const ag::TextSplit s1 = ag::split_lines(d, 0.2, r1), s2 = ag::split_lines(d, 0.2, r2), s3 = ag::split_lines(d, 0.2, r3);
  BOOST_TEST(s1.validation.size() == 2u);
  BOOST_TEST(s1.train.size() == 8u);
  BOOST_TEST((s1.validation == s2.validation && s1.train == s2.train));
  BOOST_TEST((s1.validation != s3.validation || s1.train != s3.train));
  std::set<ag::TokenLine> all(s1.train.begin(), s1.train.end());
  all.insert(s1.validation.begin(), s1.validation.end());
  BOOST_TEST(all.size() == 10u);
  ag::Rng r4(0);
  const ag::TextSplit tiny = ag::split_lines(ag::load_text_file(write("two.txt", "x\ny\n")), 0.01, r4);
  BOOST_TEST((tiny.train.size() == 1u && tiny.validation.size() == 1u));  // at least one line each side
}

BOOST_AUTO_TEST_CASE(lines_are_framed_by_the_boundary_and_cut_at_the_context) {
  const std::vector<ag::TokenLine> lines = {{1, 2}};  // "ab"
  const std::vector<ag::Sequence> whole = ag::make_sequences(lines, 32);
  BOOST_TEST_REQUIRE(whole.size() == 1u);
  BOOST_TEST((whole[0].tokens == ag::TokenLine{0, 1, 2, 0}));  // inputs 0 1 2, targets 1 2 0
  BOOST_TEST(whole[0].size() == 3u);
  const std::vector<ag::Sequence> cut = ag::make_sequences(lines, 2);
  BOOST_TEST_REQUIRE(cut.size() == 2u);
  BOOST_TEST((cut[0].tokens == ag::TokenLine{0, 1, 2}));  // inputs 0 1, targets 1 2
  BOOST_TEST((cut[1].tokens == ag::TokenLine{2, 0}));     // input 2, target 0
  BOOST_TEST(ag::count_targets(cut) == 3u);  // every target once, however it is cut
  BOOST_CHECK_THROW(ag::make_sequences(lines, 0), ag::Error);
}

BOOST_AUTO_TEST_CASE(a_batch_is_its_sequences_one_after_another) {
  const std::vector<ag::Sequence> seqs = ag::make_sequences(std::vector<ag::TokenLine>{{1, 2}, {3}, {4, 5, 6}}, 32);
  const ag::SequenceBatch b = ag::gather_sequences(seqs, arma::uvec({2, 0}));
  BOOST_TEST(arma::all(b.input == arma::uvec({0, 4, 5, 6, 0, 1, 2})));
  BOOST_TEST(arma::all(b.target == arma::uvec({4, 5, 6, 0, 1, 2, 0})));
  BOOST_TEST((b.lengths == std::vector<arma::uword>{4, 3}));
  // first, count wraps round the end: rows 2, 0, 1.
  const ag::SequenceBatch w = ag::gather_sequences(seqs, 2, 3);
  BOOST_TEST((w.lengths == std::vector<arma::uword>{4, 3, 2}));
  BOOST_TEST(w.input(7) == 0u);
  BOOST_TEST(w.input(8) == 3u);
  BOOST_CHECK_THROW(ag::gather_sequences(seqs, arma::uvec({3})), ag::Error);
  BOOST_CHECK_THROW(ag::gather_sequences({}, 0, 1), ag::Error);
}

BOOST_AUTO_TEST_CASE(the_bigram_is_add_one_smoothed_counts) {
  // Train "ab" (pairs 0->1, 1->2, 2->0), vocabulary 3: each row has 3 + 1 counts.
  const ag::Bigram b = ag::fit_bigram(ag::make_sequences(std::vector<ag::TokenLine>{{1, 2}}, 8), 3);
  BOOST_TEST(std::exp(b.log_prob(0, 1)) == 2.0 / 4.0, tt::tolerance(1e-15));
  BOOST_TEST(std::exp(b.log_prob(0, 2)) == 1.0 / 4.0, tt::tolerance(1e-15));
  // Validation "ba": 0->2, 2->1, 1->0, each 1/4.
  BOOST_TEST(b.loss(ag::make_sequences(std::vector<ag::TokenLine>{{2, 1}}, 8)) == std::log(4.0), tt::tolerance(1e-15));
}

BOOST_AUTO_TEST_CASE(the_bigram_on_the_words_is_about_2_5_nats_per_character) {
  const ag::TextData d = ag::load_words();
  ag::Rng rng(ag::derive_seed(0, 2));
  const ag::TextSplit s = ag::split_lines(d, 0.1, rng);
  const std::vector<ag::Sequence> val = ag::make_sequences(s.validation, 32);
  const double loss = ag::fit_bigram(ag::make_sequences(s.train, 32), d.vocab.size()).loss(val);
  BOOST_TEST(loss > 2.4);
  BOOST_TEST(loss < 2.55);
  BOOST_TEST(ag::count_targets(val) > 55000u);  // 6388 words, about 9.3 targets each
}
