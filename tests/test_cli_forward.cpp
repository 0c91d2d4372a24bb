// The command line's forward-mode and second-order checks: gradcheck --mode
// and --order, fuzz --forward-order, layernorm --order 2, and their refusals.
#define BOOST_TEST_MODULE cli_forward
#include <boost/test/unit_test.hpp>

#include "tests/cli_run.h"

using cli_test::has;
using cli_test::run;

BOOST_AUTO_TEST_CASE(gradcheck_checks_forward_mode_and_second_order) {
  const cli_test::Run r = run("gradcheck --mode both --order 2 --op layernorm_fused", "OPENBLAS_NUM_THREADS=1");
  BOOST_TEST(r.status == 0, r.out << r.err);
  BOOST_TEST(has(r.out, "reverse"));
  BOOST_TEST(has(r.out, "order 2"));
  BOOST_TEST(!has(r.out, "FAIL"), r.out);
  const cli_test::Run f = run("gradcheck --mode forward --op \"softmax(dim=1)\"", "OPENBLAS_NUM_THREADS=1");
  BOOST_TEST(f.status == 0, f.out << f.err);
  BOOST_TEST(has(f.out, "forward"));
  BOOST_TEST(!has(f.out, "reverse "), f.out);  // forward only
}

BOOST_AUTO_TEST_CASE(gradcheck_refuses_a_bad_mode_or_order) {
  const cli_test::Run m = run("gradcheck --mode sideways");
  BOOST_TEST(m.status == 2);
  BOOST_TEST(m.err == "autograd gradcheck: --mode must be forward, reverse or both, got 'sideways'\n", m.err);
  const cli_test::Run o = run("gradcheck --order 3");
  BOOST_TEST(o.status == 2);
  BOOST_TEST(o.err == "autograd gradcheck: --order must be 1 or 2, got 3\n", o.err);
}

BOOST_AUTO_TEST_CASE(fuzz_checks_random_graphs_at_second_order) {
  const cli_test::Run r = run("fuzz --graphs 5 --forward-order 2", "OPENBLAS_NUM_THREADS=1");
  BOOST_TEST(r.status == 0, r.out << r.err);
  BOOST_TEST(has(r.out, "forward mode matches reverse mode and second order"), r.out);
  BOOST_TEST(run("fuzz --forward-order 3").status == 2);
}

BOOST_AUTO_TEST_CASE(layernorm_compares_composed_and_fused_at_second_order) {
  const cli_test::Run r = run("layernorm --input \"1.133,-0.299,0.503; -0.176,0.911,0.143\" --order 2",
                              "OPENBLAS_NUM_THREADS=1");
  BOOST_TEST(r.status == 0, r.out << r.err);
  BOOST_TEST(has(r.out, "second order: H v"), r.out);
  BOOST_TEST(has(r.out, "composed vs fused"), r.out);
  const cli_test::Run bad = run("layernorm --input \"1,2\" --order 3");
  BOOST_TEST(bad.status == 2);
  BOOST_TEST(bad.err == "autograd layernorm: --order must be 1 or 2, got 3\n", bad.err);
}
