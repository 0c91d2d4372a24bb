#define BOOST_TEST_MODULE bench
#include <boost/test/unit_test.hpp>

#include <sstream>

#include "autograd/tape.h"
#include "bench/cases.h"
#include "bench/report.h"
#include "ops/layernorm.h"
#include "tests/cli_run.h"

// The benchmark's pieces: its table, the peer's output format, what "bytes
// saved" counts. Speed is never asserted here; `autograd bench` measures it.

namespace {

// Only the exit status and stdout matter here.
using cli_test::Run;
Run run_cli(const std::string& args) { return cli_test::run(args); }

}  // namespace

BOOST_AUTO_TEST_SUITE(bench)

BOOST_AUTO_TEST_CASE(quick_run_prints_a_row_for_every_case_and_the_targets) {
  const Run r = run_cli("bench --quick --peer off");
  BOOST_TEST_REQUIRE(r.status == 0, r.out);
  for (const bench::Case& c : bench::all_cases(true)) {
    // A row starts with the name, then (after padding) the shape.
    const std::size_t row = r.out.find("\n" + c.name + " ");
    BOOST_TEST_REQUIRE(row != std::string::npos, "no row for " << c.name << " in:\n" << r.out);
    BOOST_TEST(r.out.find(c.shape, row) != std::string::npos, c.name << " " << c.shape);
  }
  BOOST_TEST(r.out.find(" ns/op") != std::string::npos);
  BOOST_TEST(r.out.find("targets (issue 6):") != std::string::npos);
  BOOST_TEST(r.out.find("peer: off") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(bad_options_exit_2) {
  BOOST_TEST(run_cli("bench --repeats 0").status == 2);
  BOOST_TEST(run_cli("bench --peer sometimes").status == 2);
  BOOST_TEST(run_cli("bench --case no_such_case").status == 2);
  BOOST_TEST(run_cli("bench --repeats abc").status == 2);
}

BOOST_AUTO_TEST_CASE(the_peer_lines_are_parsed_and_other_lines_skipped) {
  std::istringstream lines(
      "{\"peer\": \"PyTorch 1.13.0, 1 thread\"}\n"
      "a warning that is not JSON\n"
      "{\"case\": \"layernorm_fused\", \"shape\": \"4096x768\", \"median_s\": 0.0125, \"note\": \"\"}\n"
      "{\"case\": \"rmsnorm_fused\", \"shape\": \"64x768\", \"median_s\": 2.5e-4, \"note\": \"composed\"}\n");
  const bench::Peer peer = bench::parse_peer(lines);
  BOOST_TEST(peer.ran);
  BOOST_TEST(peer.status == "PyTorch 1.13.0, 1 thread");
  BOOST_TEST_REQUIRE(peer.results.size() == 2u);
  BOOST_TEST(peer.results.at("layernorm_fused/4096x768").median_s == 0.0125);
  BOOST_TEST(peer.results.at("rmsnorm_fused/64x768").note == "composed");

  std::istringstream missing("{\"case\": \"x\", \"shape\": \"1x1\"}\n");
  BOOST_CHECK_THROW(bench::parse_peer(missing), std::runtime_error);
  std::istringstream not_a_time("{\"case\": \"x\", \"shape\": \"1x1\", \"median_s\": \"fast\"}\n");
  BOOST_CHECK_THROW(bench::parse_peer(not_a_time), std::runtime_error);
  std::istringstream nothing("Traceback (most recent call last):\n");
  BOOST_TEST(!bench::parse_peer(nothing).ran);
}

BOOST_AUTO_TEST_CASE(times_print_in_readable_units) {
  BOOST_TEST(bench::format_seconds(0.0123) == "12.3 ms");
  BOOST_TEST(bench::format_seconds(4.8e-4) == "480 us");
  BOOST_TEST(bench::format_seconds(1.2) == "1.20 s");
  BOOST_TEST(bench::format_seconds(0.25) == "250 ms");
}

BOOST_AUTO_TEST_CASE(the_table_divides_by_the_copy_bandwidth_and_by_the_peer) {
  bench::Result copy, ln;
  copy.name = "copy";
  copy.shape = "256 MB";
  copy.time.median_s = 0.05;
  copy.gbps = 10.0;
  ln.name = "layernorm_fused";
  ln.shape = "4096x768";
  ln.time.median_s = 0.02;
  ln.gbps = 5.0;  // half the copy's rate: 2.00x the bound
  ln.saved_bytes = 3 * 1024 * 1024;
  bench::Peer peer;
  peer.ran = true;
  peer.results["layernorm_fused/4096x768"] = {"layernorm_fused", "4096x768", 0.04, ""};
  const std::string table = bench::format_table({copy, ln}, peer);
  const std::size_t row = table.find("layernorm_fused");
  BOOST_TEST_REQUIRE(row != std::string::npos);
  const std::string line = table.substr(row, table.find('\n', row) - row);
  BOOST_TEST(line.find("20.0 ms") != std::string::npos, line);
  BOOST_TEST(line.find("3072 KB") != std::string::npos, line);
  BOOST_TEST(line.find("2.00") != std::string::npos, line);   // x bound
  BOOST_TEST(line.find("40.0 ms") != std::string::npos, line);  // PyTorch
  BOOST_TEST(line.find("0.50") != std::string::npos, line);   // ours / PyTorch
  const std::string targets = bench::format_targets({copy, ln}, peer, "4096x768");
  BOOST_TEST(targets.find("NOT met  0.50x (at most 0.67x)") == std::string::npos);
  BOOST_TEST(targets.find("met      0.50x (at most 0.67x)") != std::string::npos, targets);
}

// The "saved" column is tape.saved_bytes(): the fused node keeps x and gamma
// (references to its inputs) plus mean and rstd, N values each.
BOOST_AUTO_TEST_CASE(fused_layernorm_saves_x_gamma_mean_and_rstd) {
  const arma::uword N = 64, D = 48;
  ag::Tape tape;
  ag::Var x = tape.leaf(arma::mat(N, D, arma::fill::randn));
  ag::Var gamma = tape.leaf(arma::mat(1, D, arma::fill::ones));
  ag::Var beta = tape.leaf(arma::mat(1, D, arma::fill::zeros));
  ag::layernorm_fused(x, gamma, beta);
  BOOST_TEST(tape.saved_bytes() == (N * D + D + 2 * N) * sizeof(double));
  tape.clear();
  x = tape.leaf(arma::mat(N, D, arma::fill::randn));
  gamma = tape.leaf(arma::mat(1, D, arma::fill::ones));
  beta = tape.leaf(arma::mat(1, D, arma::fill::zeros));
  ag::layernorm_composed(x, gamma, beta);
  BOOST_TEST(tape.saved_bytes() > 2 * N * D * sizeof(double));
}

BOOST_AUTO_TEST_SUITE_END()
