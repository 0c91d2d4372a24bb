#define BOOST_TEST_MODULE bench
#include <boost/test/unit_test.hpp>

#include <sstream>
#include <vector>

#include "autograd/machine.h"
#include "autograd/tape.h"
#include "bench/cases.h"
#include "bench/report.h"
#include "ops/layernorm.h"
#include "tests/cli_run.h"

namespace tt = boost::test_tools;

// The benchmark's pieces: its table, the peer's output format, what "bytes
// saved" counts. Speed is never asserted here; `autograd bench` measures it.

namespace {

// Only the exit status and stdout matter here.
using cli_test::Run;
Run run_cli(const std::string& args) { return cli_test::run(args); }

}  // namespace

BOOST_AUTO_TEST_SUITE(bench)

// Warm, the bandwidth rows' buffers sat in the last-level cache and the
// non-temporal write rate came out 3-10x too slow; they run cold always.
BOOST_AUTO_TEST_CASE(the_bandwidth_rows_run_from_memory_whatever_the_caches_option) {
  bench::Plan warm;
  BOOST_TEST(!warm.cold);
  const bench::Plan p = bench::from_memory(warm);
  BOOST_TEST(p.cold);
  BOOST_TEST(p.evict_bytes == bench::large_buffer_bytes());
  bench::Plan cold;
  cold.cold = true;
  cold.evict_bytes = std::size_t{64} << 20;  // --quick's eviction stays as it was
  BOOST_TEST(bench::from_memory(cold).evict_bytes == cold.evict_bytes);
}

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
  BOOST_TEST(r.out.find("targets at 256x768:") != std::string::npos);
  BOOST_TEST(r.out.find("peer: off") != std::string::npos);
  BOOST_TEST(r.out.find("targets at the large shapes:") != std::string::npos);
  // Before: the headings named the project's issue numbers, which mean nothing to a user.
  BOOST_TEST(r.out.find("issue") == std::string::npos);
  // The header says what it measured: the memory policy, warm caches, fresh outputs.
  BOOST_TEST(r.out.find("malloc: freed memory kept for reuse") != std::string::npos);
  BOOST_TEST(r.out.find("caches: warm") != std::string::npos);
  // ... and where it ran: the CPU's caches and the build's vectors (before, only the CPU's name).
  BOOST_TEST(r.out.find("\ncpu: L1d ") != std::string::npos, r.out);
  BOOST_TEST(r.out.find(ag::build_vectors() + " (this build)") != std::string::npos, r.out);
  BOOST_TEST(r.out.find("outputs: allocated by every run") != std::string::npos);
  BOOST_TEST(r.out.find("rounds: 2 with the peer (A B A B") != std::string::npos, r.out);  // --quick: 2 rounds
}

// The caches as the header names them: sysfs where the kernel lists them, else
// the CPU's own CPUID leaves (this project's AMD virtual machines have no
// sysfs cache folders: the header said nothing of them, and the cold plan's
// eviction buffer fell back to 256 MB).
BOOST_AUTO_TEST_CASE(the_machine_names_its_caches) {
  BOOST_TEST(ag::parse_cache_size("48K") == 48u << 10);
  BOOST_TEST(ag::parse_cache_size("491520K\n") == std::size_t{491520} << 10);
  BOOST_TEST(ag::parse_cache_size("1M") == 1u << 20);
  BOOST_TEST(ag::parse_cache_size("64") == 64u);
  for (const char* bad : {"", "K", "12X", "-1K", "1 M"}) BOOST_TEST(ag::parse_cache_size(bad) == 0u, bad);
#if defined(__x86_64__)
  const ag::CacheSizes& caches = ag::cache_sizes();
  BOOST_TEST(caches.l1d >= 16u << 10, ag::describe_caches(caches));
  BOOST_TEST(caches.l2 > caches.l1d, ag::describe_caches(caches));
  BOOST_TEST((caches.source == "sysfs" || caches.source == "CPUID"), caches.source);
  // The fused kernels' alias stride is the L2's size over its ways (ops/sweeps.h).
  if (caches.l2_ways != 0) BOOST_TEST(caches.l2 % caches.l2_ways == 0u, ag::describe_caches(caches));
#endif
}

// --caches cold and --malloc default say so in the header; --case runs that
// case alone, its bound measured beside it (before, the bandwidth rows ran
// too, to price a bound at their rates).
BOOST_AUTO_TEST_CASE(the_header_names_the_conditions_it_measured) {
  const Run r = run_cli("bench --quick --peer off --caches cold --malloc default --case layernorm_kernel/64x768");
  BOOST_TEST_REQUIRE(r.status == 0, r.out);
  BOOST_TEST(r.out.find("caches: cold: 64 MB written before every run") != std::string::npos, r.out);
  BOOST_TEST(r.out.find("malloc: glibc defaults") != std::string::npos, r.out);
  BOOST_TEST(r.out.find("x bound: time / the bound") != std::string::npos, r.out);
  for (const char* absent : {"\nread ", "\nwrite_nt ", "\nlayernorm_fused "}) {
    BOOST_TEST(r.out.find(absent) == std::string::npos, absent);
  }
  // The row's "x bound" column (the 7th) is a number, not "-".
  const std::size_t row = r.out.find("\nlayernorm_kernel ");
  BOOST_TEST_REQUIRE(row != std::string::npos, r.out);
  std::istringstream line(r.out.substr(row + 1, r.out.find('\n', row + 1) - row - 1));
  std::string name, shape, median, median_unit, saved, fresh, gbps, over;
  line >> name >> shape >> median >> median_unit >> saved >> fresh >> gbps >> over;
  BOOST_TEST(std::stod(over) > 0, over);
}

// Every norm case measures its bound on its own buffers: the least traffic
// as pure passes, timed with the case's plan.
BOOST_AUTO_TEST_CASE(every_norm_case_measures_its_bound) {
  bench::Plan plan;
  plan.repeats = 1;
  plan.warmup = 1;
  plan.min_warmup_s = 0;
  plan.budget_s = 0;
  int norm_cases = 0;
  for (const bench::Case& c : bench::all_cases(true)) {
    if (c.shape != "64x768") continue;
    const bench::Result r = c.run(plan);
    BOOST_TEST(r.bound_s > 0, c.name);
    BOOST_TEST(r.read_bytes == 3.0 * 64 * 768 * 8, c.name);  // x twice and dy once
    BOOST_TEST(r.write_bytes == 2.0 * 64 * 768 * 8, c.name);  // y and dx
    ++norm_cases;
  }
  BOOST_TEST(norm_cases == 6);  // LayerNorm and RMSNorm: fused, composed, the kernel alone
}

BOOST_AUTO_TEST_CASE(bad_options_exit_2) {
  BOOST_TEST(run_cli("bench --repeats 0").status == 2);
  BOOST_TEST(run_cli("bench --rounds 0").status == 2);
  BOOST_TEST(run_cli("bench --peer sometimes").status == 2);
  BOOST_TEST(run_cli("bench --case no_such_case").status == 2);
  BOOST_TEST(run_cli("bench --repeats abc").status == 2);
  BOOST_TEST(run_cli("bench --caches lukewarm").status == 2);
}

BOOST_AUTO_TEST_CASE(the_peer_lines_are_parsed_and_other_lines_skipped) {
  const bench::PeerLine status = bench::parse_peer_line("{\"peer\": \"PyTorch 1.13.0, 1 thread\"}");
  BOOST_TEST(status.kind == bench::PeerLine::Status);
  BOOST_TEST(status.status == "PyTorch 1.13.0, 1 thread");
  BOOST_TEST(bench::parse_peer_line("a warning that is not JSON").kind == bench::PeerLine::Skip);
  BOOST_TEST(bench::parse_peer_line("").kind == bench::PeerLine::Skip);
  const bench::PeerLine timed = bench::parse_peer_line(
      "{\"case\": \"rmsnorm_fused\", \"shape\": \"64x768\", \"median_s\": 2.5e-4, \"note\": \"composed\"}");
  BOOST_TEST(timed.kind == bench::PeerLine::Timed);
  BOOST_TEST(timed.result.name == "rmsnorm_fused");
  BOOST_TEST(timed.result.shape == "64x768");
  BOOST_TEST(timed.result.median_s == 2.5e-4);
  BOOST_TEST(timed.result.note == "composed");
  const bench::PeerLine missing =
      bench::parse_peer_line("{\"case\": \"read\", \"shape\": \"600 MB\", \"missing\": \"no such case\"}");
  BOOST_TEST(missing.kind == bench::PeerLine::Missing);
  BOOST_TEST(missing.result.name == "read");

  BOOST_CHECK_THROW(bench::parse_peer_line("{\"case\": \"x\", \"shape\": \"1x1\"}"), std::runtime_error);
  BOOST_CHECK_THROW(bench::parse_peer_line("{\"case\": \"x\", \"shape\": \"1x1\", \"median_s\": \"fast\"}"),
                    std::runtime_error);
  BOOST_CHECK_THROW(bench::parse_peer_line("{\"case\": \"x\", \"shape\": \"1x1\", \"median_s\": -1}"),
                    std::runtime_error);
  BOOST_CHECK_THROW(bench::parse_peer_line("{\"shape\": \"1x1\", \"median_s\": 1}"), std::runtime_error);
  BOOST_CHECK_THROW(bench::parse_peer_line("{not json"), std::runtime_error);
}

BOOST_AUTO_TEST_CASE(times_print_in_readable_units) {
  BOOST_TEST(bench::format_seconds(0.0123) == "12.3 ms");
  BOOST_TEST(bench::format_seconds(4.8e-4) == "480 us");
  BOOST_TEST(bench::format_seconds(1.2) == "1.20 s");
  BOOST_TEST(bench::format_seconds(0.25) == "250 ms");
}

namespace {

bench::Result bandwidth_row(const char* name, double gbps) {
  bench::Result r;
  r.name = name;
  r.shape = "256 MB";
  r.gbps = gbps;
  r.time.median_s = 0.05;
  return r;
}

// 0.3 GB read + 0.2 GB written, with a measured bound of 40 ms.
bench::Result norm_row(const char* name, const char* shape, double median_s) {
  bench::Result r;
  r.name = name;
  r.shape = shape;
  r.time.median_s = median_s;
  r.read_bytes = 0.3e9;
  r.write_bytes = 0.2e9;
  r.bound_s = 0.04;
  r.gbps = 0.5e9 / median_s / 1e9;
  r.saved_bytes = 3 * 1024 * 1024;
  return r;
}

}  // namespace

// A row without a measured bound has none: the bandwidth rows no longer price one.
BOOST_AUTO_TEST_CASE(a_row_without_a_measured_bound_has_none) {
  bench::Result ln = norm_row("layernorm_fused", "4096x768", 0.08);
  BOOST_TEST(bench::over_bound(ln) == 2.0);
  ln.bound_s = 0;
  const std::vector<bench::Result> ours = {bandwidth_row("read", 10.0), bandwidth_row("write_nt", 20.0), ln};
  BOOST_TEST(bench::over_bound(ln) == -1.0);
  const std::string table = bench::format_table(ours, bench::Peer{});
  const std::size_t row = table.find("layernorm_fused");
  std::istringstream line(table.substr(row, table.find('\n', row) - row));
  std::string name, shape, median, median_unit, saved, saved_unit, fresh, gbps, over;
  line >> name >> shape >> median >> median_unit >> saved >> saved_unit >> fresh >> gbps >> over;
  BOOST_TEST(gbps == "6.25");
  BOOST_TEST(over == "-");
}

BOOST_AUTO_TEST_CASE(the_table_divides_by_the_bound_and_by_the_peer) {
  const bench::Result ln = norm_row("layernorm_fused", "4096x768", 0.08);  // 2.00x the 40 ms bound
  bench::Peer peer;
  peer.ran = true;
  peer.results["layernorm_fused/4096x768"] = {"layernorm_fused", "4096x768", 0.16, ""};
  const std::vector<bench::Result> ours = {bandwidth_row("read", 10.0), bandwidth_row("write_nt", 20.0), ln};
  const std::string table = bench::format_table(ours, peer);
  const std::size_t row = table.find("layernorm_fused");
  BOOST_TEST_REQUIRE(row != std::string::npos);
  const std::string line = table.substr(row, table.find('\n', row) - row);
  BOOST_TEST(line.find("80.0 ms") != std::string::npos, line);
  BOOST_TEST(line.find("3072 KB") != std::string::npos, line);
  BOOST_TEST(line.find("6.25") != std::string::npos, line);   // GB/s: 0.5 GB in 80 ms
  BOOST_TEST(line.find("2.00") != std::string::npos, line);   // x bound
  BOOST_TEST(line.find("160 ms") != std::string::npos, line);  // PyTorch
  BOOST_TEST(line.find("0.50") != std::string::npos, line);   // ours / PyTorch
  const std::string targets = bench::format_targets(ours, peer, "4096x768");
  BOOST_TEST(targets.find("NOT met  0.50x (at most 0.80x)") == std::string::npos);
  BOOST_TEST(targets.find("met      0.50x (at most 0.80x)") != std::string::npos, targets);
  BOOST_TEST(targets.find("NOT met  2.00x (at most 1.30x)") != std::string::npos, targets);
}

// The line of `text` that holds `what` (the test stops if none does).
std::string line_in(const std::string& text, const std::string& what) {
  const std::size_t at = text.find(what);
  BOOST_TEST_REQUIRE(at != std::string::npos, what << " in\n" << text);
  return text.substr(at, text.find('\n', at) - at);
}

// The fused LayerNorm is held to 0.80x PyTorch's layer_norm and 1.3x the bound,
// RMSNorm to layer_norm (1.13 has no fused RMSNorm) and 1.5x the bound, the
// kernels alone to 1.3x their own 8 transfers, the composed GPT step to 0.70x
// and the fused one to 0.80x; a case that did not run is n/a, not met.
BOOST_AUTO_TEST_CASE(the_bound_targets_compare_both_norms_with_layer_norm) {
  bench::Peer peer;
  peer.ran = true;
  peer.results["layernorm_fused/4096x768"] = {"layernorm_fused", "4096x768", 0.1, ""};
  peer.results["rmsnorm_fused/4096x768"] = {"rmsnorm_fused", "4096x768", 0.4, "composed"};
  const std::vector<bench::Result> ours = {bandwidth_row("read", 10.0), bandwidth_row("write_nt", 20.0),
                                           norm_row("layernorm_fused", "4096x768", 0.08),
                                           norm_row("rmsnorm_fused", "4096x768", 0.12)};
  const std::string t = bench::format_bound_targets(ours, peer, {"4096x768"});
  auto line_of = [&](const std::string& what) { return line_in(t, what); };
  BOOST_TEST(line_of("layernorm_fused 4096x768, ours/PyTorch layer_norm").find("met      0.80x") != std::string::npos);
  BOOST_TEST(line_of("layernorm_fused 4096x768, ours/PyTorch layer_norm").find("(at most 0.80x)") != std::string::npos);
  BOOST_TEST(line_of("layernorm_fused 4096x768, time / bound").find("NOT met  2.00x (at most 1.30x)") != std::string::npos);
  BOOST_TEST(line_of("rmsnorm_fused 4096x768, time / bound").find("(at most 1.50x)") != std::string::npos);
  BOOST_TEST(line_of("rmsnorm_fused 4096x768, ours/PyTorch layer_norm").find("NOT met  1.20x (at most 1.00x)") !=
             std::string::npos);
  BOOST_TEST(line_of("layernorm_composed 4096x768").find("n/a") != std::string::npos);
  BOOST_TEST(line_of("gpt_step 4x64 b32, ours/PyTorch").find("n/a") != std::string::npos);
  BOOST_TEST(line_of("layernorm_kernel 4096x768, time / its 8 transfers").find("n/a") != std::string::npos);

  // A kernel row with its 8 transfers timed: the ratio, in the targets and in the row's note.
  bench::Result kernel = norm_row("layernorm_kernel", "4096x768", 0.026);
  kernel.sweeps_s = 0.02;
  kernel.note = "the fused kernels alone";
  bench::Result rms = norm_row("rmsnorm_kernel", "4096x768", 0.024);
  rms.sweeps_s = 0.02;
  // And the GPT steps at 0.75x PyTorch's: the composed one over its 0.70x, the fused one within 0.80x.
  peer.results["gpt_step/4x64 b32"] = {"gpt_step", "4x64 b32", 0.04, ""};
  peer.results["gpt_step/4x64 b32 fused"] = {"gpt_step", "4x64 b32 fused", 0.04, ""};
  const std::vector<bench::Result> with_kernels = {kernel, rms, norm_row("gpt_step", "4x64 b32", 0.03),
                                                   norm_row("gpt_step", "4x64 b32 fused", 0.03)};
  const std::string k = bench::format_bound_targets(with_kernels, peer, {"4096x768"});
  auto kernel_line = [&](const std::string& what) { return line_in(k, what); };
  BOOST_TEST(kernel_line("layernorm_kernel 4096x768, time / its 8 transfers").find("  met      1.30x (at most 1.30x)") !=
             std::string::npos);
  BOOST_TEST(kernel_line("rmsnorm_kernel 4096x768, time / its 8 transfers").find("  met      1.20x (at most 1.30x)") !=
             std::string::npos);
  BOOST_TEST(kernel_line("gpt_step 4x64 b32, ours/PyTorch").find("NOT met  0.75x (at most 0.70x)") != std::string::npos);
  BOOST_TEST(kernel_line("gpt_step 4x64 b32 fused, ours/PyTorch").find("  met      0.75x (at most 0.80x)") !=
             std::string::npos);
  const std::string table = bench::format_table(with_kernels, bench::Peer{});
  BOOST_TEST(table.find("the fused kernels alone; 1.30x their 8 transfers") != std::string::npos, table);

  // A ratio just past its limit shows the digit that puts it there, not the limit itself.
  peer.results["gpt_step/4x64 b32"] = {"gpt_step", "4x64 b32", 0.0300, ""};
  const std::string close =
      bench::format_bound_targets({norm_row("gpt_step", "4x64 b32", 0.0211)}, peer, {"4096x768"});
  BOOST_TEST(line_in(close, "gpt_step 4x64 b32, ours/PyTorch").find("NOT met  0.703x (at most 0.70x)") !=
             std::string::npos, close);
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
