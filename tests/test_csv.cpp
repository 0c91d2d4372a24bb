// CSV reading, matrix literals and atomic writes: values, and errors that name
// the file, the row, the column and the bad text.
#define BOOST_TEST_MODULE csv
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include <sys/stat.h>

#include "data/csv.h"
#include "data/atomic_write.h"

using namespace ag;
namespace fs = std::filesystem;

namespace {

// A fresh folder per test case, removed afterwards.
struct TempDir {
  fs::path dir;
  TempDir() {
    std::random_device rd;
    dir = fs::temp_directory_path() / ("ag_csv_" + std::to_string(rd()) + std::to_string(rd()));
    fs::create_directories(dir);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::string write(const std::string& name, const std::string& text) const {
    const fs::path p = dir / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
};

// The DataError message of f(), or "" when nothing was thrown.
template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const DataError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

BOOST_AUTO_TEST_SUITE(read_csv_file)

BOOST_AUTO_TEST_CASE(values_with_and_without_header) {
  TempDir t;
  const std::string p = t.write("a.csv", "x1, x2,label\n1.5,-2,0\n3e2, .25 ,1\r\n\n");
  const CsvTable with = read_csv(p, true);
  BOOST_TEST((with.header == std::vector<std::string>{"x1", "x2", "label"}));
  BOOST_REQUIRE_EQUAL(with.values.n_rows, 2u);
  BOOST_REQUIRE_EQUAL(with.values.n_cols, 3u);
  BOOST_TEST(with.values(0, 0) == 1.5);
  BOOST_TEST(with.values(0, 1) == -2.0);
  BOOST_TEST(with.values(1, 0) == 300.0);
  BOOST_TEST(with.values(1, 1) == 0.25);
  BOOST_TEST(with.values(1, 2) == 1.0);

  const CsvTable without = read_csv(t.write("b.csv", "1,2\n3,4"), false);  // no final newline
  BOOST_TEST(without.header.empty());
  BOOST_TEST(arma::approx_equal(without.values, arma::mat{{1, 2}, {3, 4}}, "absdiff", 0.0));
}

BOOST_AUTO_TEST_CASE(bad_cells_name_file_row_column_and_text) {
  TempDir t;
  const std::string p = t.write("bad.csv", "a,b\n1,2\n3,abc\n");
  const std::string e = error_of([&] { read_csv(p, true); });
  BOOST_TEST(contains(e, p));
  BOOST_TEST(contains(e, "row 3, column 2"), e);  // the header is row 1
  BOOST_TEST(contains(e, "'abc' is not a number"), e);

  const std::string missing = t.write("missing.csv", "1,2,3\n4,,6\n");
  BOOST_TEST(contains(error_of([&] { read_csv(missing, false); }), "row 2, column 2: missing value"));

  for (const char* bad : {"nan", "NaN", "inf", "-inf", "Infinity", "0x10", "1e999", "1.2.3", "--1", "e5", "5e", "+"}) {
    const std::string q = t.write("n.csv", std::string("1,2\n0,") + bad + "\n");
    const std::string msg = error_of([&] { read_csv(q, false); });
    BOOST_TEST(contains(msg, "row 2, column 2"), bad << " -> '" << msg << "'");
  }
}

BOOST_AUTO_TEST_CASE(ragged_empty_and_unreadable) {
  TempDir t;
  const std::string ragged = t.write("r.csv", "1,2,3\n4,5\n");
  const std::string e = error_of([&] { read_csv(ragged, false); });
  BOOST_TEST(contains(e, "row 2 has 2 values, expected 3"), e);

  const std::string longer = t.write("l.csv", "a,b\n1,2\n1,2,3\n");
  BOOST_TEST(contains(error_of([&] { read_csv(longer, true); }), "row 3 has 3 values, expected 2"));

  BOOST_TEST(contains(error_of([&] { read_csv(t.write("e.csv", ""), false); }), "empty file"));
  BOOST_TEST(contains(error_of([&] { read_csv(t.write("w.csv", "\n  \n"), false); }), "empty file"));
  BOOST_TEST(contains(error_of([&] { read_csv(t.write("h.csv", "a,b\n"), true); }), "no data rows"));

  const std::string nope = (t.dir / "does_not_exist.csv").string();
  const std::string e2 = error_of([&] { read_csv(nope, false); });
  BOOST_TEST(contains(e2, nope), e2);
  BOOST_TEST(contains(e2, "cannot open"), e2);
  BOOST_TEST(contains(error_of([&] { read_csv(t.dir.string(), false); }), "directory"));
}

// Binary junk must give a clean error with printable text, never a crash.
BOOST_AUTO_TEST_CASE(binary_junk) {
  TempDir t;
  std::string junk(300, '\0');
  for (std::size_t i = 0; i < junk.size(); ++i) junk[i] = static_cast<char>((i * 37) % 256);
  const std::string e = error_of([&] { read_csv(t.write("j.bin", junk), false); });
  BOOST_TEST(!e.empty());
  for (char c : e) BOOST_TEST((c >= 32 && c <= 126));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(matrix_literal)

BOOST_AUTO_TEST_CASE(rows_and_values) {
  const arma::mat m = parse_matrix("1.133,-0.299,0.503; -0.176,0.911,0.143", "--input");
  BOOST_TEST(arma::approx_equal(m, arma::mat{{1.133, -0.299, 0.503}, {-0.176, 0.911, 0.143}}, "absdiff", 0.0));
  BOOST_TEST(arma::approx_equal(parse_matrix(" 3, 1,5 ,7 ;", "--input"), arma::mat{{3, 1, 5, 7}}, "absdiff", 0.0));
  BOOST_TEST(parse_matrix("2", "--eps").n_elem == 1u);
}

BOOST_AUTO_TEST_CASE(errors_name_the_option_and_cell) {
  const std::string ragged = error_of([] { parse_matrix("1,2,3; 4,5", "--input"); });
  BOOST_TEST(contains(ragged, "--input: row 2 has 2 values, expected 3"), ragged);
  const std::string word = error_of([] { parse_matrix("1,x,3", "--gamma"); });
  BOOST_TEST(contains(word, "--gamma: row 1, column 2: 'x' is not a number"), word);
  BOOST_TEST(contains(error_of([] { parse_matrix("", "--input"); }), "--input: empty; give at least one row of numbers"));
  BOOST_TEST(contains(error_of([] { parse_matrix(" ; ", "--input"); }), "--input: row 1 is empty"));
  BOOST_TEST(contains(error_of([] { parse_matrix("1,2;;3,4", "--input"); }), "row 2 is empty"));
  BOOST_TEST(contains(error_of([] { parse_matrix("1,,2", "--input"); }), "column 2: missing value"));
  BOOST_TEST(contains(error_of([] { parse_matrix(",1", "--input"); }), "column 1: missing value"));
  BOOST_TEST(contains(error_of([] { parse_matrix("1,nan", "--input"); }), "'nan' is not a number"));
}

// The one grammar the CLI and the live page share: decimal numbers separated by
// commas and/or spaces, rows by ';' or newlines, one trailing separator allowed.
BOOST_AUTO_TEST_CASE(spaces_separate_numbers_as_commas_do) {
  const arma::mat want{{3, 1, 5, 7}};
  for (const char* text : {"3 1 5 7", "3, 1 5,7", "  3\t1 , 5 ,7  ", "3,1,5,7,", "3 1 5 7 ,"}) {
    BOOST_TEST(arma::approx_equal(parse_matrix(text, "--input"), want, "absdiff", 0.0), text);
  }
  const arma::mat two{{1, 2}, {3, 4}};
  for (const char* text : {"1 2; 3 4", "1,2\n3,4", "1,2;3,4;", "1,2,;3,4,", "1 2\n3 4\n", "1,2\r\n3,4"}) {
    BOOST_TEST(arma::approx_equal(parse_matrix(text, "--input"), two, "absdiff", 0.0), text);
  }
}

BOOST_AUTO_TEST_CASE(only_decimal_finite_numbers) {
  for (const char* text : {"0x10", "nan", "inf", "-inf", "infinity", "0x1p3", "1e", "--1", "1.2.3", "+", "1_000"}) {
    const std::string e = error_of([&] { parse_matrix(std::string("1, ") + text, "--input"); });
    BOOST_TEST(contains(e, std::string("--input: row 1, column 2: '") + text + "' is not a number"), e);
  }
  const std::string big = error_of([] { parse_matrix("1e400, 1", "--input"); });
  BOOST_TEST(contains(big, "--input: row 1, column 1: '1e400' is out of range for a double (the largest is about 1.8e308)"), big);
  BOOST_TEST(parse_matrix("1e-400, -2.5E+3, .5, 5., +7", "--input")(1) == -2500.0);  // an underflow is (near) 0
  BOOST_TEST(parse_number(" 2e-3 ", "--eps") == 2e-3);
  BOOST_TEST(contains(error_of([] { parse_number("0x10", "eps"); }), "eps: '0x10' is not a number"));
  BOOST_TEST(contains(error_of([] { parse_number("1, 2", "eps"); }), "eps: '1, 2' is not a number"));
}

BOOST_AUTO_TEST_CASE(one_trailing_separator_only) {
  BOOST_TEST(contains(error_of([] { parse_matrix("1,2,,", "--input"); }), "row 1, column 3: missing value"));
  BOOST_TEST(contains(error_of([] { parse_matrix("1,2;;", "--input"); }), "row 2 is empty"));
  BOOST_TEST(contains(error_of([] { parse_matrix("1,2; 3", "--input"); }), "row 2 has 1 value, expected 2 (as row 1)"));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(atomic_write)

BOOST_AUTO_TEST_CASE(writes_replaces_and_leaves_no_temporaries) {
  TempDir t;
  const std::string p = (t.dir / "out.csv").string();
  write_file_atomic(p, "first\n");
  write_file_atomic(p, "second,1\n");
  std::ifstream in(p);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  BOOST_TEST(text == "second,1\n");
  std::size_t files = 0;
  for (const auto& entry : fs::directory_iterator(t.dir)) {
    (void)entry;
    ++files;
  }
  BOOST_TEST(files == 1u);  // the temporary file was renamed, not left behind
}

BOOST_AUTO_TEST_CASE(bad_path_is_a_data_error) {
  TempDir t;
  const std::string p = (t.dir / "no_such_folder" / "out.csv").string();
  const std::string e = error_of([&] { write_file_atomic(p, "x"); });
  BOOST_TEST(contains(e, p), e);
  BOOST_TEST(contains(e, "cannot write"), e);
  BOOST_TEST(contains(error_of([&] { write_file_atomic(t.dir.string(), "x"); }), "cannot write"));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(writing)

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Before: rename() replaced the link with a regular file (the victim stayed,
// but a FIFO or device given as --output-file became a plain file).
BOOST_AUTO_TEST_CASE(a_symlink_is_refused_and_its_target_untouched) {
  TempDir t;
  const std::string victim = t.write("victim.txt", "precious");
  const fs::path link = t.dir / "out.csv";
  fs::create_symlink(victim, link);
  const std::string msg = error_of([&] { ag::write_file_atomic(link.string(), "new"); });
  BOOST_TEST(msg.find("cannot write: it is a symbolic link, which is left alone") != std::string::npos, msg);
  BOOST_TEST(fs::is_symlink(link));
  BOOST_TEST(read_all(victim) == "precious");
}

BOOST_AUTO_TEST_CASE(a_fifo_is_written_in_place_not_replaced) {
  TempDir t;
  const fs::path fifo = t.dir / "out.csv";
  BOOST_TEST_REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::string received;
  std::thread reader([&] { received = read_all(fifo); });
  ag::write_file_atomic(fifo.string(), "a,b\n1,2\n");
  reader.join();
  BOOST_TEST(received == "a,b\n1,2\n");
  BOOST_TEST(fs::is_fifo(fifo));
}

BOOST_AUTO_TEST_CASE(a_link_to_a_fifo_is_written_through_like_dev_stdout) {
  TempDir t;
  const fs::path fifo = t.dir / "pipe";
  BOOST_TEST_REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const fs::path link = t.dir / "stdout";
  fs::create_symlink(fifo, link);
  std::string received;
  std::thread reader([&] { received = read_all(fifo); });
  ag::write_file_atomic(link.string(), "y\n");
  reader.join();
  BOOST_TEST(received == "y\n");
  BOOST_TEST(fs::is_symlink(link));
}

BOOST_AUTO_TEST_CASE(a_full_device_is_a_clear_error) {
  // /dev/full is a character device whose every write fails with ENOSPC.
  const std::string msg = error_of([] { ag::write_file_atomic("/dev/full", "x"); });
  BOOST_TEST(msg == "/dev/full: cannot write (No space left on device)", msg);
}

BOOST_AUTO_TEST_CASE(no_temporary_is_left_and_a_directory_is_refused) {
  TempDir t;
  const std::string path = t.write("m.csv", "old");
  ag::write_file_atomic(path, "new");
  BOOST_TEST(read_all(path) == "new");
  const std::string msg = error_of([&] { ag::write_file_atomic(t.dir.string(), "x"); });
  BOOST_TEST(msg.find("cannot write: it is a directory") != std::string::npos, msg);
  BOOST_TEST(std::distance(fs::directory_iterator(t.dir), fs::directory_iterator()) == 1);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(odd_but_valid_files)

// Before: the header's first name kept the invisible mark, so a label column
// named "a" was not found, and a first cell of numbers failed to parse.
BOOST_AUTO_TEST_CASE(a_utf8_byte_order_mark_is_not_part_of_the_first_cell) {
  TempDir t;
  const std::string with_header = t.write("h.csv", "\xEF\xBB\xBF" "a,b\n1,2\n");
  const ag::CsvTable h = ag::read_csv(with_header, true);
  BOOST_TEST(h.header[0] == "a");
  const std::string numbers = t.write("n.csv", "\xEF\xBB\xBF" "1,2\n3,4\n");
  BOOST_TEST(ag::read_csv(numbers, false).values(0, 0) == 1.0);
}

BOOST_AUTO_TEST_CASE(a_name_of_255_bytes_can_be_written) {
  TempDir t;
  const fs::path long_name = t.dir / (std::string(251, 'm') + ".csv");  // 255 bytes, the most a name may have
  ag::write_file_atomic(long_name.string(), "x\n");
  BOOST_TEST(fs::exists(long_name));
}

BOOST_AUTO_TEST_SUITE_END()
