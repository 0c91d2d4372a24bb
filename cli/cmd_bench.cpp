// autograd bench: the performance cases of issue 6, ours and (optionally) PyTorch's.
#include <algorithm>
#include <ctime>
#include <fstream>
#include <iostream>
#include <thread>

#include "bench/cases.h"
#include "bench/report.h"
#include "cli/cli.h"

namespace cli {

namespace {

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown CPU";
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string one;
  in >> one;
  return one.empty() ? "unknown" : one;
}

bool selected(const bench::Case& c, const std::string& only) {
  return only.empty() || only == c.name || only == bench::case_id(c.name, c.shape);
}

bench::Plan make_plan(bool quick, int repeats) {
  bench::Plan plan;
  plan.repeats = quick ? std::min(repeats, 3) : repeats;
  plan.warmup = quick ? 1 : 2;
  plan.min_warmup_s = quick ? 0.0 : 0.05;
  plan.budget_s = quick ? 0.02 : 0.5;
  return plan;
}

void print_header(const bench::Plan& plan, bool quick, bool keep_memory) {
  const std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  std::cout << "autograd bench: double precision, 1 thread, median of at least " << plan.repeats
            << " runs" << (quick ? " (--quick: a smoke run, not a measurement)" : "") << "\n"
            << "machine: " << cpu_model() << ", " << std::thread::hardware_concurrency()
            << " cores; " << date << "; load average " << load_average() << " at start\n"
            << "malloc: " << (keep_memory ? bench::kKeepMemoryNote : "glibc defaults") << "\n\n";
}

// Ours: the selected cases, and always the copy (every LayerNorm row is a multiple of its rate).
std::vector<bench::Result> run_ours(const bench::Plan& plan, bool quick, const std::string& only) {
  const std::vector<bench::Case> cases = bench::all_cases(quick);
  std::vector<bench::Result> results;
  for (const bench::Case& c : cases) {
    if (c.name != "copy" && !selected(c, only)) continue;
    std::cerr << "running " << bench::case_id(c.name, c.shape) << "\n";
    results.push_back(c.run(plan));
  }
  return results;
}

bench::Peer run_the_peer(const bench::Plan& plan, bool quick, const std::string& only, bool keep_memory) {
  std::string args = "--repeats " + std::to_string(plan.repeats);
  if (quick) args += " --quick";
  if (!only.empty()) args += " --case '" + only + "'";  // a known case name: no quoting surprises
  std::cerr << "running the PyTorch peer\n";
  return bench::run_peer(args, keep_memory ? bench::kKeepMemoryEnv : "");
}

}  // namespace

int cmd_bench(const std::vector<std::string>& args) {
  po::options_description options("options");
  std::string only, peer_mode, malloc_mode;
  int repeats = 7;
  options.add_options()
      ("quick", "fewer repeats and a smaller copy (a smoke run, not a measurement)")
      ("case", po::value(&only), "run one case: a name (layernorm_fused) or name/shape (layernorm_fused/4096x768)")
      ("repeats", po::value(&repeats)->default_value(7), "timed runs per case at least (fast cases run more)")
      ("peer", po::value(&peer_mode)->default_value("auto"), "auto: also run bench/peer_torch.py when python3 can import torch; off: ours alone")
      ("malloc", po::value(&malloc_mode)->default_value("keep"), "keep: glibc keeps freed memory for reuse (no page faults per run), in ours and the peer alike; default: glibc's defaults");
  po::variables_map vm;
  if (!parse_options("bench", "Times LayerNorm/RMSNorm (fused and composed), the per-op overhead and a\n"
                     "digits training epoch in double precision on one thread, against a memory copy\n"
                     "measured in the same run and, when available, PyTorch on the CPU.",
                     options, args, vm)) {
    return 0;
  }
  if (repeats < 1) throw UsageError("--repeats must be at least 1, got " + std::to_string(repeats));
  if (peer_mode != "auto" && peer_mode != "off") {
    throw UsageError("--peer must be auto or off, got '" + peer_mode + "'");
  }
  if (malloc_mode != "keep" && malloc_mode != "default") {
    throw UsageError("--malloc must be keep or default, got '" + malloc_mode + "'");
  }
  const bool quick = vm.count("quick") > 0, keep_memory = malloc_mode == "keep";
  bool found = false;
  for (const bench::Case& c : bench::all_cases(quick)) found = found || selected(c, only);
  if (!found) {
    std::string names;
    for (const bench::Case& c : bench::all_cases(quick)) names += " " + bench::case_id(c.name, c.shape);
    throw UsageError("no case named '" + only + "'; the cases are:" + names);
  }

  bench::set_blas_threads(1);
  if (keep_memory) bench::keep_freed_memory();
  const bench::Plan plan = make_plan(quick, repeats);
  print_header(plan, quick, keep_memory);
  const std::vector<bench::Result> results = run_ours(plan, quick, only);
  bench::Peer peer;
  peer.status = "off (--peer off): ours alone";
  if (peer_mode == "auto") peer = run_the_peer(plan, quick, only, keep_memory);
  std::cout << bench::format_table(results, peer) << "\npeer: " << peer.status << "\n"
            << "load average " << load_average() << " at the end\n\n"
            << bench::format_targets(results, peer, quick ? "256x768" : "4096x768");
  return 0;
}

}  // namespace cli
