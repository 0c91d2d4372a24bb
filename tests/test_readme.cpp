// The README's first example, compiled and checked, so the README never rots.
#define BOOST_TEST_MODULE readme
#include <boost/test/unit_test.hpp>

#include <fstream>
#include <sstream>

#include "ops/op_table.h"
#include "ops/ops.h"

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
  // z = x W + b = [0.5 - 0.5 + 0.1, -1 - 4 - 0.1] = [0.1, -5.1]; dy/dh = 2h; dh/dz = 1 - h^2.
  const double h0 = std::tanh(0.1), h1 = std::tanh(-5.1);
  const double dz0 = 2 * h0 * (1 - h0 * h0), dz1 = 2 * h1 * (1 - h1 * h1);
  BOOST_TEST(y.value()(0) == h0 * h0 + h1 * h1, boost::test_tools::tolerance(1e-14));
  BOOST_TEST(b.grad()(0) == dz0, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(b.grad()(1) == dz1, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(x.grad()(0) == dz0 * 0.5 + dz1 * -1.0, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(x.grad()(1) == dz0 * 0.25 + dz1 * 2.0, boost::test_tools::tolerance(1e-12));
}

// Every op in the op table has its row in the README's op table.
BOOST_AUTO_TEST_CASE(readme_lists_every_op) {
  std::ifstream in(AUTOGRAD_SOURCE_DIR "/README.md");
  BOOST_REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  for (const ag::OpCase& op : ag::op_table()) {
    BOOST_TEST(text.str().find("| `" + op.name + "` |") != std::string::npos, "README lacks op " << op.name);
  }
}
