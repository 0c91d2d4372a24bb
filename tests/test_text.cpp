// Character-level text: the words list, FILE.txt and its hostile inputs, the
// seeded split by line, the framing into sequences and the bigram baseline.
#define BOOST_TEST_MODULE text
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "autograd/tape.h"
#include "data/csv.h"
#include "data/text.h"

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

std::string text_of(const ag::TextData& d, std::size_t line) {
  std::vector<arma::uword> tokens(d.lines[line].begin(), d.lines[line].end());
  return d.vocab.decode(tokens);
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
  std::set<std::vector<arma::uword>> distinct(d.lines.begin(), d.lines.end());
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
  BOOST_TEST(error_for(std::string("ok\nab\0cd\n", 9)).find("line 2, character 3: byte 0x00 is not UTF-8 text") !=
             std::string::npos);
  BOOST_TEST(error_for("ok\n\xff\xfe\n").find("line 2, character 1: byte 0xff") != std::string::npos);
  BOOST_TEST(error_for("caf\xc3").find("byte 0xc3") != std::string::npos);  // a character cut off
  BOOST_TEST(error_for(std::string(ag::kMaxLineChars + 1, 'a')).find("line 1 is longer than 10000 characters") !=
             std::string::npos);
  BOOST_TEST(error_for(std::string(ag::kMaxLineChars, 'a')) == "");  // the limit itself is fine
  std::string many;
  for (int c = 0x100; c < 0x100 + 1001; ++c) {  // 1001 distinct two-byte characters
    many += static_cast<char>(0xC0 | (c >> 6));
    many += static_cast<char>(0x80 | (c & 0x3F));
  }
  BOOST_TEST(error_for(many).find("1001 distinct characters; at most 1000") != std::string::npos);
  for (const std::string& e : {error_for(""), error_for("\xff")}) BOOST_TEST(e.find('\n') == std::string::npos);
  BOOST_CHECK_THROW(ag::load_text_file((scratch() / "missing.txt").string()), ag::DataError);
  BOOST_CHECK_THROW(ag::load_text_file(scratch().string()), ag::DataError);
}

BOOST_AUTO_TEST_CASE(the_split_is_by_line_seeded_and_covers_every_line) {
  const ag::TextData d = ag::load_text_file(write("ten.txt", "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n"));
  ag::Rng r1(7), r2(7), r3(8);
  const ag::TextSplit s1 = ag::split_lines(d, 0.2, r1), s2 = ag::split_lines(d, 0.2, r2), s3 = ag::split_lines(d, 0.2, r3);
  BOOST_TEST(s1.validation.size() == 2u);
  BOOST_TEST(s1.train.size() == 8u);
  BOOST_TEST((s1.validation == s2.validation && s1.train == s2.train));
  BOOST_TEST((s1.validation != s3.validation || s1.train != s3.train));
  std::set<std::vector<arma::uword>> all(s1.train.begin(), s1.train.end());
  all.insert(s1.validation.begin(), s1.validation.end());
  BOOST_TEST(all.size() == 10u);
  ag::Rng r4(0);
  const ag::TextSplit tiny = ag::split_lines(ag::load_text_file(write("two.txt", "x\ny\n")), 0.01, r4);
  BOOST_TEST((tiny.train.size() == 1u && tiny.validation.size() == 1u));  // at least one line each side
}

BOOST_AUTO_TEST_CASE(lines_are_framed_by_the_boundary_and_cut_at_the_context) {
  const std::vector<std::vector<arma::uword>> lines = {{1, 2}};  // "ab"
  const std::vector<ag::Sequence> whole = ag::make_sequences(lines, 32);
  BOOST_TEST_REQUIRE(whole.size() == 1u);
  BOOST_TEST(arma::all(whole[0].input == arma::uvec({0, 1, 2})));
  BOOST_TEST(arma::all(whole[0].target == arma::uvec({1, 2, 0})));
  const std::vector<ag::Sequence> cut = ag::make_sequences(lines, 2);
  BOOST_TEST_REQUIRE(cut.size() == 2u);
  BOOST_TEST(arma::all(cut[0].input == arma::uvec({0, 1})));
  BOOST_TEST(arma::all(cut[0].target == arma::uvec({1, 2})));
  BOOST_TEST(arma::all(cut[1].input == arma::uvec({2})));
  BOOST_TEST(arma::all(cut[1].target == arma::uvec({0})));
  BOOST_TEST(ag::count_targets(cut) == 3u);  // every target once, however it is cut
  BOOST_CHECK_THROW(ag::make_sequences(lines, 0), ag::Error);
}

BOOST_AUTO_TEST_CASE(a_batch_is_its_sequences_one_after_another) {
  const std::vector<ag::Sequence> seqs = ag::make_sequences({{1, 2}, {3}, {4, 5, 6}}, 32);
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
  const ag::Bigram b = ag::fit_bigram(ag::make_sequences({{1, 2}}, 8), 3);
  BOOST_TEST(std::exp(b.log_prob(0, 1)) == 2.0 / 4.0, tt::tolerance(1e-15));
  BOOST_TEST(std::exp(b.log_prob(0, 2)) == 1.0 / 4.0, tt::tolerance(1e-15));
  // Validation "ba": 0->2, 2->1, 1->0, each 1/4.
  BOOST_TEST(b.loss(ag::make_sequences({{2, 1}}, 8)) == std::log(4.0), tt::tolerance(1e-15));
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
