// autograd bench: the performance cases (bench/README.md), ours and (optionally) PyTorch's.
#include <algorithm>
#include <ctime>
#include <fstream>
#include <iostream>
#include <memory>
#include <thread>

#include "autograd/machine.h"
#include "autograd/memory.h"
#include "bench/cases.h"
#include "bench/report.h"
#include "bench/rounds.h"
#include "cli/cli.h"

namespace cli {

namespace {

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string one;
  in >> one;
  return one.empty() ? "unknown" : one;
}

bool selected(const bench::Case& c, const std::string& only) {
  return only.empty() || only == c.name || only == bench::case_id(c.name, c.shape);
}

bench::Plan make_plan(bool quick, int repeats, bool cold) {
  bench::Plan plan;
  plan.repeats = quick ? std::min(repeats, 3) : repeats;
  plan.warmup = quick ? 1 : 2;
  plan.min_warmup_s = quick ? 0.0 : 0.05;
  plan.budget_s = quick ? 0.02 : 0.5;
  plan.cold = cold;
  plan.evict_bytes = quick ? std::size_t{64} << 20 : bench::large_buffer_bytes();
  if (cold) plan.max_repeats = 50;  // each run first writes the eviction buffer
  return plan;
}

void print_header(const bench::Plan& plan, bool quick, int rounds) {
  const std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  const std::string evict = std::to_string(plan.evict_bytes >> 20) + " MB";
  std::cout << "autograd bench: double precision, 1 thread, median of at least " << plan.repeats
            << " runs" << (quick ? " (--quick: a smoke run, not a measurement)" : "") << "\n"
            << "machine: " << ag::cpu_model() << ", " << std::thread::hardware_concurrency()
            << " cores; " << date << "; load average " << load_average() << " at start\n"
            << "cpu: " << ag::describe_caches(ag::cache_sizes()) << "; vectors: " << ag::build_vectors()
            << " (this build)\n"
            << "malloc: " << ag::memory_policy_note() << "\n"
            << "        the peer: " << (ag::memory_policy() == ag::MemoryPolicy::Keep ? "the same malloc settings" : "glibc defaults")
            << ", 4 KB pages (PyTorch asks for no huge pages)\n"
            << "caches: "
            << (plan.cold ? "cold: " + evict + " written before every run (untimed), so inputs come from memory"
                          : "warm: inputs written just before every run (untimed); the caches hold what fits")
            << ", ours and the peer's alike; the bandwidth rows (read ... copy) always cold: memory's rates\n"
            << "outputs: allocated by every run, as a training step does (*_kernel rows: reused, no tape)\n"
            << "x bound: time / the bound, the case's least traffic as pure passes (sums over x, then x and dy;\n"
            << "         non-temporal fills of y and dx) on its own buffers, timed right after it; median of the rounds' ratios\n"
            << "rounds: " << rounds << " with the peer (A B A B: ours, then PyTorch, case by case); median: of the"
            << " rounds' medians; ours/PT: the median of the rounds' ratios, spread: their min-max\n\n";
}

// The selected cases (each norm case measures its own bound beside it).
std::vector<bench::Case> selected_cases(bool quick, const std::string& only) {
  std::vector<bench::Case> cases;
  for (bench::Case& c : bench::all_cases(quick)) {
    if (selected(c, only)) cases.push_back(std::move(c));
  }
  return cases;
}

// Ours and (peer auto) PyTorch in alternating rounds, case by case.
bench::Rounds run_both(const bench::Plan& plan, bool quick, const std::string& only, bool use_peer,
                       bool keep_memory, int rounds) {
  std::string args = "--repeats " + std::to_string(plan.repeats);
  if (quick) args += " --quick";
  if (plan.cold) args += " --cold --evict-bytes " + std::to_string(plan.evict_bytes);
  std::unique_ptr<bench::TorchPeer> peer;
  if (use_peer) {
    std::cerr << "starting the PyTorch peer\n";
    peer = std::make_unique<bench::TorchPeer>(args, keep_memory ? bench::kKeepMemoryEnv : "");
  }
  const bool running = peer && peer->running();
  bench::Rounds r = bench::run_rounds(selected_cases(quick, only), running ? rounds : 1,
                                      [&](const bench::Case& c) { return c.run(plan); },
                                      running ? peer.get() : nullptr, &std::cerr);
  const std::string failure = r.peer.status;
  r.peer.status = !peer ? "off (--peer off): ours alone" : peer->status();
  if (!failure.empty()) r.peer.status += "; " + failure;
  if (running && failure.empty() && peer->finish() != 0) {
    r.peer.status += "; " + (peer->error().empty() ? std::string("the peer exited with an error") : peer->error());
  }
  return r;
}

void require_one_of(const std::string& option, const std::string& value, const char* a, const char* b) {
  if (value != a && value != b) {
    throw UsageError("--" + option + " must be " + a + " or " + b + ", got '" + value + "'");
  }
}

// --case names a case (or is empty: every case); else the error lists them.
void require_case(const std::string& only, bool quick) {
  for (const bench::Case& c : bench::all_cases(quick)) {
    if (selected(c, only)) return;
  }
  std::string names;
  for (const bench::Case& c : bench::all_cases(quick)) names += " " + bench::case_id(c.name, c.shape);
  throw UsageError("no case named '" + only + "'; the cases are:" + names);
}

void check_settings(int repeats, int rounds, const std::string& peer_mode, const std::string& malloc_mode,
                    const std::string& caches) {
  if (repeats < 1) throw UsageError("--repeats must be at least 1, got " + std::to_string(repeats));
  if (rounds < 1) throw UsageError("--rounds must be at least 1, got " + std::to_string(rounds));
  require_one_of("peer", peer_mode, "auto", "off");
  require_one_of("malloc", malloc_mode, "keep", "default");
  require_one_of("caches", caches, "warm", "cold");
}

void print_results(const bench::Rounds& both, bool quick) {
  const std::vector<bench::Result>& results = both.ours;
  const bench::Peer& peer = both.peer;
  std::cout << bench::format_table(results, peer) << "\npeer: " << peer.status << "\n"
            << "load average " << load_average() << " at the end\n\n"
            << bench::format_targets(results, peer, quick ? "256x768" : "4096x768") << "\n"
            << bench::format_bound_targets(results, peer, quick ? std::vector<std::string>{"250x768", "256x768", "1024x1024"}
                                                                : std::vector<std::string>{"4000x768", "4096x768", "16384x1024"});
}

}  // namespace

int cmd_bench(const std::vector<std::string>& args) {
  po::options_description options("options");
  std::string only, peer_mode, malloc_mode, caches;
  int repeats = 7, rounds = 5;
  options.add_options()
      ("quick", "fewer repeats and a smaller copy (a smoke run, not a measurement)")
      ("case", po::value(&only), "run one case: a name (layernorm_fused) or name/shape (layernorm_fused/4096x768)")
      ("repeats", po::value(&repeats)->default_value(7), "timed runs per case at least (fast cases run more)")
      ("rounds", po::value(&rounds)->default_value(5), "with the peer: ours then PyTorch, case by case, this many times (--quick: 2); the ratio is the median of the rounds', with its min-max spread")
      ("peer", po::value(&peer_mode)->default_value("auto"), "auto: also run bench/peer_torch.py when python3 can import torch; off: ours alone")
      ("malloc", po::value(&malloc_mode)->default_value("keep"), "keep: glibc keeps freed memory for reuse (no page faults per run; the library's default), in ours and the peer alike; default: glibc's defaults")
      ("caches", po::value(&caches)->default_value("warm"), "warm: inputs written just before each run; cold: a buffer larger than the last-level cache written before each run, in ours and the peer alike");
  po::variables_map vm;
  if (!parse_options("bench", "Times LayerNorm/RMSNorm (fused and composed), the per-op overhead and a\n"
                     "digits training epoch in double precision on one thread, against the memory's\n"
                     "read and write rates measured in the same run and, when available, PyTorch on the CPU.",
                     options, args, vm)) {
    return 0;
  }
  const bool quick = vm.count("quick") > 0, keep_memory = malloc_mode == "keep";
  check_settings(repeats, rounds, peer_mode, malloc_mode, caches);
  require_case(only, quick);

  // BLAS runs on one thread (main asks, autograd/blas_threads.h); the memory policy main asked for is replaced here.
  ag::set_memory_policy(keep_memory ? ag::MemoryPolicy::Keep : ag::MemoryPolicy::GlibcDefaults);
  const bench::Plan plan = make_plan(quick, repeats, caches == "cold");
  if (quick) rounds = std::min(rounds, 2);
  print_header(plan, quick, rounds);
  // The eviction buffer before any case's buffers, as when the bandwidth rows
  // ran first (bench/README.md: a --case run that allocated it after them ran slower).
  bench::evict_caches(bench::from_memory(plan).evict_bytes);
  print_results(run_both(plan, quick, only, peer_mode == "auto", keep_memory, rounds), quick);
  return 0;
}

}  // namespace cli
