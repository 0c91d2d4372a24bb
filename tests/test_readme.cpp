// The README and docs/ checked against the code, so they never rot: the first
// example, the op table (docs/op-table.md), the command-line error examples.
#define BOOST_TEST_MODULE readme
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "check/op_table.h"
#include "ops/ops.h"
#include "tests/cli_run.h"

BOOST_AUTO_TEST_CASE(readme_example_gives_the_printed_gradients) {
  // --- begin README example ---
  ag::Tape tape;
  ag::Var x = tape.leaf({{1.0, -2.0}});                // one sample, two features
  ag::Var W = tape.leaf({{0.5, -1.0}, {0.25, 2.0}});   // 2x2 weights
  ag::Var b = tape.leaf({{0.1, -0.1}});                // 1x2 bias, broadcast over rows
  ag::Var h = ag::tanh(ag::matmul(x, W) + b);          // 1x2
  ag::Var y = ag::sum(h * h);                          // 1x1 loss
  tape.backward(y);                                    // seeds dy/dy = 1, walks the tape backwards
  std::cout << "y = " << y.value()(0) << "\n"          // y = 1.00979
            << "dy/dx = " << x.grad()                  // dy/dx = 0.0990 0.0487
            << "dy/db = " << b.grad();                 // dy/db = 0.1974 -0.0003
  // --- end README example ---
  // z = x W + b = [0.1, -5.1]; dy/dh = 2h; dh/dz = 1 - h^2, in long double: the
  // exact math. At h = tanh(-5.1) = -0.99993, 1 - h^2 cancels four digits, so an
  // ulp of h is 1.5e-12 of dz1; a double reference is itself 6e-13 off.
  const long double h0 = std::tanh(static_cast<long double>(0.1)), h1 = std::tanh(static_cast<long double>(-5.1));
  const double dz0 = static_cast<double>(2 * h0 * (1 - h0 * h0)), dz1 = static_cast<double>(2 * h1 * (1 - h1 * h1));
  BOOST_TEST(y.value()(0) == static_cast<double>(h0 * h0 + h1 * h1), boost::test_tools::tolerance(1e-14));
  BOOST_TEST(b.grad()(0) == dz0, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(b.grad()(1) == dz1, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(x.grad()(0) == dz0 * 0.5 + dz1 * -1.0, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(x.grad()(1) == dz0 * 0.25 + dz1 * 2.0, boost::test_tools::tolerance(1e-12));
}

// The table lines ("| ... |") of `text` from the line `heading` on.
std::vector<std::string> table_lines(std::istream& text, const std::string& heading) {
  std::vector<std::string> lines;
  bool inside = heading.empty();
  for (std::string line; std::getline(text, line);) {
    if (line == heading) inside = true;
    else if (inside && line.rfind("## ", 0) == 0) break;  // the next section
    if (inside && line.rfind("|", 0) == 0) lines.push_back(line);
  }
  return lines;
}

// docs/op-table.md shows exactly the registry's rows, ops and
// composed functions, with their formulas (`autograd gradcheck --markdown`).
BOOST_AUTO_TEST_CASE(readme_op_table_is_the_registry) {
  std::ifstream in(AUTOGRAD_SOURCE_DIR "/docs/op-table.md");
  BOOST_REQUIRE(in.good());
  const std::vector<std::string> readme = table_lines(in, "# The op table");
  std::istringstream generated(ag::op_table_markdown());
  const std::vector<std::string> expected = table_lines(generated, "");
  BOOST_TEST(expected.size() == ag::op_table().size() + ag::composites().size() + 4);  // two headers of 2 lines
  for (std::size_t k = 0; k < std::max(readme.size(), expected.size()); ++k) {
    const std::string want = k < expected.size() ? expected[k] : "(nothing)";
    const std::string got = k < readme.size() ? readme[k] : "(nothing)";
    BOOST_TEST(got == want, "docs/op-table.md line " << k + 1 << ":\n  is        " << got << "\n  should be " << want);
  }
}

// README.md and every docs/*.md, in a fixed order.
std::vector<std::filesystem::path> documentation_pages() {
  namespace fs = std::filesystem;
  std::vector<fs::path> pages;
  for (const fs::directory_entry& e : fs::directory_iterator(AUTOGRAD_SOURCE_DIR "/docs")) {
    if (e.path().extension() == ".md") pages.push_back(e.path());
  }
  std::sort(pages.begin(), pages.end());
  pages.insert(pages.begin(), fs::path(AUTOGRAD_SOURCE_DIR "/README.md"));
  return pages;
}

// Every command-line error the README and docs/ show ("$ autograd ..." followed by the
// one line it prints) is run as shown: exit status 2 and exactly that line on
// stderr, so the README's error examples cannot drift from the program.
BOOST_AUTO_TEST_CASE(readme_error_examples_are_what_the_program_prints) {
  namespace fs = std::filesystem;
  std::vector<std::string> lines;
  for (const fs::path& page : documentation_pages()) {
    std::ifstream in(page);
    BOOST_REQUIRE(in.good());
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    lines.push_back("");  // no example spans two pages
  }

  const fs::path dir = fs::temp_directory_path() / ("ag_readme_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  // The README's bad.csv: a value that is not a number at row 3, column 2.
  std::ofstream(dir / "bad.csv") << "x1,x2,label\n0.5,1.5,0\n0.25,oops,1\n";
  // The README's labels.csv: a class label past the limit of 1000 classes.
  std::ofstream(dir / "labels.csv") << "x,label\n1,0\n2,999999\n";
  int checked = 0;
  for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
    const std::string prompt = "$ autograd ";
    if (lines[i].rfind(prompt, 0) != 0 || lines[i + 1].rfind("autograd", 0) != 0) continue;
    const std::string args = lines[i].substr(prompt.size());
    const cli_test::Run r = cli_test::run(args, "", dir);
    BOOST_TEST(r.status == 2, "autograd " << args << ": exit status " << r.status);
    BOOST_TEST(r.err == lines[i + 1] + "\n", "autograd " << args << " printed: " << r.err);
    ++checked;
  }
  fs::remove_all(dir);
  BOOST_TEST(checked >= 10, "found only " << checked << " error examples in the README and docs/");
}
