#define BOOST_TEST_MODULE bench_rounds
#include <boost/test/unit_test.hpp>

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/peer.h"
#include "bench/report.h"
#include "bench/rounds.h"
#include "train/text_task.h"

// `autograd bench`'s rounds: ours and the peer alternate case by case (A B A B),
// and each ratio comes with its spread over the rounds. Nothing here is timed:
// the fakes below say how long each run "took", and log the order they ran in.

namespace {

struct Log {
  std::vector<std::string> calls;
};

// Times from a script: case id -> one time per round; a case not in it is missing.
class FakePeer : public bench::PeerLink {
 public:
  FakePeer(Log& log, std::map<std::string, std::vector<double>> times, int fail_at = 0)
      : log_(log), times_(std::move(times)), fail_at_(fail_at) {}
  std::optional<bench::PeerResult> time(const std::string& name, const std::string& shape) override {
    const std::string id = bench::case_id(name, shape);
    log_.calls.push_back("peer " + id);
    if (++asked_ == fail_at_) throw std::runtime_error("the fake peer died");
    auto it = times_.find(id);
    if (it == times_.end()) return std::nullopt;
    const std::size_t round = rounds_[id]++;
    return bench::PeerResult{name, shape, it->second.at(round), "fake"};
  }

 private:
  Log& log_;
  std::map<std::string, std::vector<double>> times_;
  std::map<std::string, std::size_t> rounds_;
  int asked_ = 0, fail_at_;
};

// Ours, from a script too: case id -> one median per round.
struct FakeOurs {
  Log& log;
  std::map<std::string, std::vector<double>> times;
  std::map<std::string, std::size_t> rounds = {};
  bench::Result operator()(const bench::Case& c) {
    const std::string id = bench::case_id(c.name, c.shape);
    log.calls.push_back("ours " + id);
    bench::Result r;
    r.name = c.name;
    r.shape = c.shape;
    const double t = times.at(id).at(rounds[id]++);
    r.time = {t, t * 0.9, t * 1.1, 7};
    r.gbps = 1.0 / t;  // 1 GB over the median
    return r;
  }
};

bench::Case fake_case(const std::string& name, const std::string& shape) {
  return {name, shape, [](const bench::Plan&) -> bench::Result { throw std::logic_error("not run here"); }};
}

std::vector<bench::Case> three_cases() {
  return {fake_case("read", "1 MB"), fake_case("layernorm_fused", "4x4"), fake_case("gpt_step", "b32")};
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_spread_is_the_min_median_and_max) {
  const bench::Spread odd = bench::spread_of({1.5, 0.5, 1.0});
  BOOST_TEST(odd.min == 0.5);
  BOOST_TEST(odd.median == 1.0);
  BOOST_TEST(odd.max == 1.5);
  BOOST_TEST(odd.rounds == 3);
  BOOST_TEST(bench::spread_of({4.0, 1.0, 2.0, 3.0}).median == 2.5);  // even: the middle two's mean
  BOOST_TEST(bench::spread_of({0.7}).median == 0.7);
  BOOST_CHECK_THROW(bench::spread_of({}), std::invalid_argument);
}

// A B A B per case, the cases in order; a case the peer lacks runs once, ours alone.
BOOST_AUTO_TEST_CASE(ours_and_the_peer_alternate_case_by_case) {
  Log log;
  FakePeer peer(log, {{"layernorm_fused/4x4", {2, 2, 2}}, {"gpt_step/b32", {1, 1, 1}}});
  FakeOurs ours{log, {{"read/1 MB", {5}}, {"layernorm_fused/4x4", {1, 2, 3}}, {"gpt_step/b32", {1, 1, 1}}}};
  bench::run_rounds(three_cases(), 3, std::ref(ours), &peer, nullptr);
  const std::vector<std::string> expected = {
      "ours read/1 MB",           "peer read/1 MB",                                        // the peer lacks it
      "ours layernorm_fused/4x4", "peer layernorm_fused/4x4", "ours layernorm_fused/4x4",
      "peer layernorm_fused/4x4", "ours layernorm_fused/4x4", "peer layernorm_fused/4x4",
      "ours gpt_step/b32",        "peer gpt_step/b32",        "ours gpt_step/b32",
      "peer gpt_step/b32",        "ours gpt_step/b32",        "peer gpt_step/b32"};
  BOOST_TEST(log.calls == expected, boost::test_tools::per_element());
}

// Each round's ratio pairs that round's two medians, and the row's ratio is the
// median of those ratios, not the ratio of the two medians (they differ here).
BOOST_AUTO_TEST_CASE(each_ratio_is_the_median_of_the_rounds_ratios_with_its_spread) {
  Log log;
  FakePeer peer(log, {{"layernorm_fused/4x4", {4, 2, 1}}});
  FakeOurs ours{log, {{"read/1 MB", {5}}, {"layernorm_fused/4x4", {1, 4, 3}}, {"gpt_step/b32", {1, 1, 1}}}};
  const bench::Rounds r = bench::run_rounds(three_cases(), 3, std::ref(ours), &peer, nullptr);
  // Ratios per round: 1/4, 4/2, 3/1 = 0.25, 2, 3. Medians: ours 3, peer 2 (their ratio 1.5).
  const bench::Spread s = r.peer.ratios.at("layernorm_fused/4x4");
  BOOST_TEST(s.min == 0.25);
  BOOST_TEST(s.median == 2.0);
  BOOST_TEST(s.max == 3.0);
  BOOST_TEST(s.rounds == 3);
  BOOST_TEST_REQUIRE(r.ours.size() == 3u);
  BOOST_TEST(r.ours[1].time.median_s == 3.0);
  BOOST_TEST(r.peer.results.at("layernorm_fused/4x4").median_s == 2.0);
  BOOST_TEST(bench::peer_ratio(r.ours[1], r.peer) == 2.0);  // the rounds' median, not 3 / 2
  BOOST_TEST(r.peer.ran);
  BOOST_TEST(r.peer.results.count("read/1 MB") == 0u);
  BOOST_TEST(r.ours[0].time.median_s == 5.0);  // ours alone, once
  BOOST_TEST(r.ours[2].time.median_s == 1.0);  // the peer lacks gpt_step here: once
  BOOST_TEST(ours.rounds.at("gpt_step/b32") == 1u);

  // The table prints the median ratio and its min-max spread.
  const std::string table = bench::format_table(r.ours, r.peer);
  const std::size_t row = table.find("\nlayernorm_fused");
  BOOST_TEST_REQUIRE(row != std::string::npos, table);
  const std::string line = table.substr(row + 1, table.find('\n', row + 1) - row - 1);
  BOOST_TEST(line.find(" 2.00 ") != std::string::npos, line);
  BOOST_TEST(line.find("0.25-3.00") != std::string::npos, line);
  BOOST_TEST(table.find("spread") != std::string::npos);
}

// The rounds of a case merge into one row: the median of the medians, the
// extreme min and max, every repeat counted, GB/s over the merged median.
BOOST_AUTO_TEST_CASE(rounds_merge_into_one_row) {
  Log log;
  FakeOurs ours{log, {{"layernorm_fused/4x4", {2, 1, 4}}}};
  const bench::Case c = fake_case("layernorm_fused", "4x4");
  const bench::Result merged = bench::merge_rounds({ours(c), ours(c), ours(c)});
  BOOST_TEST(merged.time.median_s == 2.0);
  BOOST_TEST(merged.time.min_s == 0.9, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(merged.time.max_s == 4.4, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(merged.time.repeats == 21);
  BOOST_TEST(merged.gbps == 0.5, boost::test_tools::tolerance(1e-12));
  BOOST_CHECK_THROW(bench::merge_rounds({}), std::invalid_argument);
}

// No peer: every case once. A peer that fails: its failure is said, the case
// keeps only the rounds that paired, and the rest runs ours alone, never asking it again.
BOOST_AUTO_TEST_CASE(without_a_peer_or_after_it_fails_ours_runs_alone) {
  Log alone;
  FakeOurs ours{alone, {{"read/1 MB", {5}}, {"layernorm_fused/4x4", {1, 2, 3}}, {"gpt_step/b32", {1, 1, 1}}}};
  const bench::Rounds none = bench::run_rounds(three_cases(), 3, std::ref(ours), nullptr, nullptr);
  BOOST_TEST(alone.calls.size() == 3u);
  BOOST_TEST(!none.peer.ran);
  BOOST_CHECK_THROW(bench::run_rounds(three_cases(), 0, std::ref(ours), nullptr, nullptr), std::invalid_argument);

  Log log;
  FakePeer peer(log, {{"layernorm_fused/4x4", {2, 2, 2}}, {"gpt_step/b32", {1, 1, 1}}}, 3);  // dies on the 3rd request
  FakeOurs more{log, {{"read/1 MB", {5}}, {"layernorm_fused/4x4", {1, 2, 3}}, {"gpt_step/b32", {1, 1, 1}}}};
  const bench::Rounds r = bench::run_rounds(three_cases(), 3, std::ref(more), &peer, nullptr);
  const std::vector<std::string> expected = {"ours read/1 MB", "peer read/1 MB", "ours layernorm_fused/4x4",
                                             "peer layernorm_fused/4x4", "ours layernorm_fused/4x4",
                                             "peer layernorm_fused/4x4", "ours gpt_step/b32"};
  BOOST_TEST(log.calls == expected, boost::test_tools::per_element());
  BOOST_TEST(r.peer.status.find("the fake peer died") != std::string::npos, r.peer.status);
  BOOST_TEST(r.peer.ratios.at("layernorm_fused/4x4").rounds == 1);
  BOOST_TEST(r.ours[1].time.median_s == 1.0);  // round 2 had no peer time: dropped
  BOOST_TEST(r.peer.results.count("gpt_step/b32") == 0u);
}

// The protocol against the real bench/peer_torch.py --serve: one process,
// requests answered in order, a case it lacks answered as missing, a clean
// exit at the end of input. And its gpt_step is our default GPT: the note of
// both gpt_step cases names our parameter count. One peer for all of it (torch
// takes seconds to import). Skipped when no python3 here imports torch.
BOOST_AUTO_TEST_CASE(the_real_peer_answers_requests_one_by_one) {
  bench::TorchPeer peer("--quick --repeats 1", "");
  if (!peer.running()) {
    BOOST_TEST_MESSAGE("python3 cannot import torch: the peer protocol is not checked (" << peer.status() << ")");
    return;
  }
  BOOST_TEST(peer.status().find("PyTorch ") == 0u, peer.status());
  for (int round = 0; round < 2; ++round) {
    const std::optional<bench::PeerResult> r = peer.time("per_op_overhead", "10000 x 1x1");
    BOOST_TEST_REQUIRE(r.has_value());
    BOOST_TEST(r->name == "per_op_overhead");
    BOOST_TEST(r->median_s > 0);
  }
  BOOST_TEST(!peer.time("layernorm_kernel", "64x768").has_value());  // ours alone: no tape-free kernel there
  const std::optional<bench::PeerResult> norm = peer.time("layernorm_fused", "64x768");
  BOOST_TEST_REQUIRE(norm.has_value());
  BOOST_TEST(norm->shape == "64x768");
  ag::Rng rng(1);
  ag::Gpt ours(ag::gpt_spec(ag::gpt_config(), 27), rng);
  const std::string count = std::to_string(ours.parameter_count()) + " parameters";
  for (const char* shape : {"4x64 b32", "4x64 b32 fused"}) {
    const std::optional<bench::PeerResult> r = peer.time("gpt_step", shape);
    BOOST_TEST_REQUIRE(r.has_value(), shape);
    BOOST_TEST(r->note.find(count) == 0u, r->note);
  }
  BOOST_TEST(peer.finish() == 0);
  BOOST_CHECK_THROW(peer.time("per_op_overhead", "10000 x 1x1"), std::runtime_error);
}

// Over the bound, like over the peer: each round's time over that round's own
// bound, then the median of those ratios (here 2, not the medians' 3 / 1.5).
BOOST_AUTO_TEST_CASE(over_the_bound_is_the_median_of_the_rounds_ratios) {
  std::vector<bench::Result> rounds(3);
  const double times[] = {1, 4, 3}, bounds[] = {2, 2, 1};  // ratios 0.5, 2, 3
  for (int i = 0; i < 3; ++i) {
    rounds[i].time.median_s = times[i];
    rounds[i].bound_s = bounds[i];
  }
  const bench::Result merged = bench::merge_rounds(rounds);
  BOOST_TEST(merged.time.median_s == 3.0);
  BOOST_TEST(bench::over_bound(merged) == 2.0);
  BOOST_TEST(merged.over_bound_min == 0.5);
  BOOST_TEST(merged.over_bound_max == 3.0);
  rounds[1].bound_s = 0;  // a round without its bound: no bound at all, rather than a median of fewer
  BOOST_TEST(bench::merge_rounds(rounds).bound_s == 0.0);
  BOOST_TEST(bench::over_bound(bench::merge_rounds(rounds)) == -1.0);
}
