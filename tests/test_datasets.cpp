// Datasets: shapes, labels, seeded reproducibility, the shipped digits, splits,
// batches, and the CSV loader's errors.
#define BOOST_TEST_MODULE datasets
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <filesystem>
#include <functional>
#include <iterator>
#include <fstream>
#include <set>

#include "autograd/tape.h"
#include "autograd/error.h"
#include "data/datasets.h"
#include "data/digits.h"

namespace tt = boost::test_tools;

namespace {
struct TempDir {
  std::filesystem::path path;
  TempDir() : path(std::filesystem::temp_directory_path() / ("ag-datasets-" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string write(const std::string& name, const std::string& text) const {
    const std::string file = (path / name).string();
    std::ofstream(file) << text;
    return file;
  }
};

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ag::DataError& e) {
    return e.what();
  }
  return "(no DataError)";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
}  // namespace

BOOST_AUTO_TEST_CASE(generators_have_the_stated_shapes_and_labels) {
  struct Case { std::string name; arma::uword n, d, classes; };
  for (const Case& c : {Case{"moons", 1000, 2, 2}, Case{"circles", 1000, 2, 2}, Case{"spirals", 900, 2, 3},
                        Case{"xor", 1000, 2, 2}, Case{"sine", 500, 1, 0}}) {
    const ag::Dataset d = ag::make_dataset(c.name, 0);
    BOOST_TEST(d.size() == c.n, c.name);
    BOOST_TEST(d.features() == c.d, c.name);
    BOOST_TEST(d.classes == c.classes, c.name);
    BOOST_TEST(d.y.n_rows == c.n);
    BOOST_TEST(d.x.is_finite());
    if (c.classes > 0) {
      const arma::uvec labels = d.labels();
      BOOST_TEST(labels.max() == c.classes - 1, c.name);
      // Balanced by construction (xor only roughly: its labels come from random points).
      for (arma::uword k = 0; k < c.classes; ++k) {
        if (c.name == "xor") BOOST_TEST(arma::accu(labels == k) > c.n / 3, c.name);
        else BOOST_TEST(arma::accu(labels == k) == c.n / c.classes, c.name);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(generators_are_seeded) {
  for (const char* name : {"moons", "circles", "spirals", "xor", "sine"}) {
    const ag::Dataset a = ag::make_dataset(name, 3), b = ag::make_dataset(name, 3), c = ag::make_dataset(name, 4);
    BOOST_TEST(arma::approx_equal(a.x, b.x, "absdiff", 0.0), name);
    BOOST_TEST(!arma::approx_equal(a.x, c.x, "absdiff", 0.0), name);
  }
}

BOOST_AUTO_TEST_CASE(generated_points_follow_their_geometry) {
  ag::Rng rng(1);
  const ag::Dataset circles = ag::make_circles(200, 0.0, 0.5, rng);  // no noise: radii exactly 1 and 0.5
  const arma::vec r = arma::sqrt(arma::sum(arma::square(circles.x), 1));
  for (arma::uword i = 0; i < 200; ++i) BOOST_TEST(r(i) == (circles.y(i) == 0 ? 1.0 : 0.5), tt::tolerance(1e-12));
  const ag::Dataset xr = ag::make_xor(200, 0.0, rng);
  for (arma::uword i = 0; i < 200; ++i) BOOST_TEST(xr.y(i) == (xr.x(i, 0) * xr.x(i, 1) > 0 ? 1.0 : 0.0));
  const ag::Dataset sine = ag::make_sine(50, 0.0, rng);
  BOOST_TEST(arma::approx_equal(sine.y, arma::mat(arma::sin(sine.x)), "absdiff", 1e-15));
}

BOOST_AUTO_TEST_CASE(digits_ship_with_the_repository) {
  const ag::Dataset d = ag::load_digits();
  BOOST_TEST(d.size() == 1797u);
  BOOST_TEST(d.features() == 64u);
  BOOST_TEST(d.classes == 10u);
  BOOST_TEST(d.x.min() == 0.0);
  BOOST_TEST(d.x.max() == 1.0);  // pixel counts 0..16 scaled by 1/16
  BOOST_TEST(d.x(0, 2) == 5.0 / 16);  // first image: 0,0,5,13,...
  BOOST_TEST(d.y(0) == 0.0);
  BOOST_TEST(d.y(1) == 1.0);
  BOOST_TEST(arma::accu(d.labels() == 8) == 174u);
}

BOOST_AUTO_TEST_CASE(digits_reader_rejects_a_file_that_is_not_gzip) {
  TempDir tmp;
  const std::string path = tmp.write("digits.csv.gz", "0,1,2\n");
  BOOST_TEST(contains(message_of([&] { ag::load_digits(path); }), path));
  BOOST_TEST(contains(message_of([&] { ag::load_digits(tmp.path.string() + "/missing.gz"); }), "cannot open"));
}

// The reader is zlib's since the libc++ build (Boost.Iostreams' compiled gzip
// crashed there): a cut file is still an error naming it, not a short dataset.
BOOST_AUTO_TEST_CASE(digits_reader_rejects_a_cut_gzip_file) {
  TempDir tmp;
  std::ifstream in(ag::default_digits_path(), std::ios::binary);
  const std::string whole((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string path = tmp.write("cut.csv.gz", whole.substr(0, whole.size() / 2));
  const std::string message = message_of([&] { ag::load_digits(path); });
  BOOST_TEST(contains(message, path + ": not a valid gzip file"), message);
}

BOOST_AUTO_TEST_CASE(split_is_disjoint_complete_and_seeded) {
  const ag::Dataset d = ag::make_dataset("moons", 0);
  ag::Rng r1(5), r2(5);
  const ag::Split a = ag::train_validation_split(d, 0.2, r1), b = ag::train_validation_split(d, 0.2, r2);
  BOOST_TEST(a.train.size() == 800u);
  BOOST_TEST(a.validation.size() == 200u);
  BOOST_TEST(arma::approx_equal(a.validation.x, b.validation.x, "absdiff", 0.0));
  // Every sample lands on exactly one side: the sums of all coordinates match.
  BOOST_TEST(arma::accu(a.train.x) + arma::accu(a.validation.x) == arma::accu(d.x), tt::tolerance(1e-12));
  BOOST_CHECK_THROW(ag::train_validation_split(d, 1.0, r1), ag::Error);
}

BOOST_AUTO_TEST_CASE(batches_cover_every_sample_once_in_a_seeded_order) {
  ag::Rng r1(9), r2(9);
  const std::vector<arma::uvec> a = ag::shuffled_batches(10, 4, r1), b = ag::shuffled_batches(10, 4, r2);
  BOOST_TEST_REQUIRE(a.size() == 3u);
  BOOST_TEST(a[0].n_elem == 4u);
  BOOST_TEST(a[2].n_elem == 2u);
  std::set<arma::uword> seen;
  for (const arma::uvec& batch : a) seen.insert(batch.begin(), batch.end());
  BOOST_TEST(seen.size() == 10u);
  for (std::size_t i = 0; i < a.size(); ++i) BOOST_TEST(arma::all(a[i] == b[i]));
  const std::vector<arma::uvec> next = ag::shuffled_batches(10, 4, r1);  // a new epoch: a new order
  BOOST_TEST(!arma::all(next[0] == a[0]));
}

BOOST_AUTO_TEST_CASE(csv_dataset_takes_the_label_column_by_name_number_or_position) {
  TempDir tmp;
  const std::string path = tmp.write("iris.csv", "a,label,b\n1,0,2\n3,1,4\n5,2,6\n");
  const ag::Dataset byname = ag::load_csv_dataset(path, "label");
  BOOST_TEST((byname.task == ag::Task::Classification));
  BOOST_TEST(byname.classes == 3u);
  BOOST_TEST(arma::approx_equal(byname.x, arma::mat{{1, 2}, {3, 4}, {5, 6}}, "absdiff", 0.0));
  BOOST_TEST(arma::approx_equal(ag::load_csv_dataset(path, "2").y, byname.y, "absdiff", 0.0));
  const ag::Dataset last = ag::load_csv_dataset(path);  // default: the last column, 2 4 6
  BOOST_TEST(last.classes == 7u);
  const std::string reg = tmp.write("reg.csv", "x,y\n1,0.5\n2,1.5\n");
  BOOST_TEST((ag::load_csv_dataset(reg).task == ag::Task::Regression));
  BOOST_TEST(ag::make_dataset(path, 0, "label").size() == 3u);
}

BOOST_AUTO_TEST_CASE(csv_class_labels_have_a_limit_and_never_silently_become_regression) {
  TempDir tmp;
  // 999 is the largest class label: 1000 classes.
  BOOST_TEST(ag::load_csv_dataset(tmp.write("top.csv", "x,y\n1,0\n2,999\n")).classes == ag::kMaxClasses);
  for (const std::string label : {"999999", "1e5", "1000000", "1000"}) {
    const std::string path = tmp.write("big.csv", "x,y\n1,0\n2," + label + "\n");
    const std::string msg = message_of([&] { ag::load_csv_dataset(path); });
    BOOST_TEST(contains(msg, path + ": label "), msg);
    BOOST_TEST(contains(msg, "(row 3): class labels must be whole numbers 0..999 (at most 1000 classes)"), msg);
    BOOST_TEST(contains(msg, "to fit the labels by regression instead"), msg);
  }
  // A value that is not a whole number still makes it regression, however large.
  BOOST_TEST((ag::load_csv_dataset(tmp.write("reg.csv", "x,y\n1,0\n2,999999.5\n")).task == ag::Task::Regression));
}

BOOST_AUTO_TEST_CASE(csv_dataset_errors_name_the_file_and_the_problem) {
  TempDir tmp;
  const std::string bad_cell = tmp.write("bad.csv", "a,b,label\n1,2,0\n3,x,1\n");
  const std::string msg = message_of([&] { ag::load_csv_dataset(bad_cell, "label"); });
  BOOST_TEST(contains(msg, bad_cell));
  BOOST_TEST(contains(msg, "row 3"), msg);
  BOOST_TEST(contains(msg, "column 2"), msg);
  const std::string good = tmp.write("good.csv", "a,b,label\n1,2,0\n");
  const std::string no_label = message_of([&] { ag::load_csv_dataset(good, "target"); });
  BOOST_TEST(contains(no_label, "no label column 'target'"), no_label);
  BOOST_TEST(contains(no_label, "a, b, label"), no_label);
  BOOST_TEST(contains(message_of([&] { ag::load_csv_dataset(good, "9"); }), "no label column '9'"));
  const std::string one_col = tmp.write("one.csv", "label\n1\n");
  BOOST_TEST(contains(message_of([&] { ag::load_csv_dataset(one_col); }), "feature"));
  const std::string header_only = tmp.write("header.csv", "a,label\n");
  BOOST_TEST(message_of([&] { ag::load_csv_dataset(header_only); }) != "(no DataError)");
  BOOST_TEST(contains(message_of([&] { ag::load_csv_dataset(tmp.path.string() + "/missing.csv"); }), "missing.csv"));
  const std::string unknown = message_of([] { ag::make_dataset("mnist", 0); });
  BOOST_TEST(contains(unknown, "unknown dataset 'mnist'"), unknown);
}
