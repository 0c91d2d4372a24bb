// The PyTorch peer of `autograd bench` when its python hangs: at the probe for
// torch, before its first line, on a request, at its exit. Each wait ends
// after AUTOGRAD_PEER_TIMEOUT seconds (short here) with a message, and the
// process is killed with what it started. Nothing is timed: a hang would be
// this test never ending (CTest's timeout), not a slow assertion.
#define BOOST_TEST_MODULE bench_peer
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/peer.h"

namespace fs = std::filesystem;

namespace {

// A fake python: passes the probe (`python -c 'import torch'`) unless told to
// hang there, then hangs where FAKE_MODE says. It writes its own pid and its
// sleeping child's to FAKE_PIDS, so the test can see both were stopped.
const char* const kFakePython = R"(#!/bin/sh
echo $$ >> "$FAKE_PIDS"
hang() { sleep 1000 & echo $! >> "$FAKE_PIDS"; wait; }
if [ "$1" = -c ]; then
  [ "$FAKE_MODE" = probe ] && hang
  exit 0
fi
case "$FAKE_MODE" in
  start) hang ;;
  answer) echo '{"peer": "Fake 0.1"}'; hang ;;
  exit) echo '{"peer": "Fake 0.1"}'; read -r request; echo '{"case": "c", "shape": "1x1", "missing": "no"}'; exec sleep 1000 ;;
esac
)";

struct FakePeer {
  fs::path dir = fs::temp_directory_path() / ("ag_fake_peer_" + std::to_string(::getpid()));
  explicit FakePeer(const std::string& mode) {
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::ofstream(dir / "python3") << kFakePython;
    fs::permissions(dir / "python3", fs::perms::owner_all);
    ::setenv("AUTOGRAD_PYTHON", (dir / "python3").c_str(), 1);
    ::setenv("AUTOGRAD_PEER_TIMEOUT", "0.5", 1);
    ::setenv("FAKE_MODE", mode.c_str(), 1);
    ::setenv("FAKE_PIDS", (dir / "pids").c_str(), 1);
  }
  ~FakePeer() {
    ::unsetenv("AUTOGRAD_PYTHON");
    ::unsetenv("AUTOGRAD_PEER_TIMEOUT");
    fs::remove_all(dir);
  }
  // True when every process the fake started has ended (gone, or a zombie
  // that init has not reaped yet). The peer kills its process group with
  // SIGKILL and reaps only the shell it started; the shell's own child dies
  // when the kernel next schedules it, which on a loaded machine is not at
  // once. So this waits for that, up to a minute: a process that was never
  // sent the signal sleeps for 1000 s and still fails the test.
  bool all_stopped() const {
    std::ifstream in(dir / "pids");
    std::vector<std::string> pids;
    for (std::string pid; in >> pid;) pids.push_back(pid);
    BOOST_TEST_REQUIRE(!pids.empty());
    for (int tries = 0; tries < 6000; ++tries) {
      if (std::none_of(pids.begin(), pids.end(), alive)) return true;
      ::usleep(10'000);
    }
    return false;
  }
  static bool alive(const std::string& pid) {
    std::ifstream stat("/proc/" + pid + "/stat");
    std::string skip, state;
    return stat >> skip >> skip >> state && state != "Z" && state != "X";
  }
};

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

// Before: std::system("python3 -c 'import torch'") waited forever.
BOOST_AUTO_TEST_CASE(a_python_that_hangs_importing_torch_is_stopped_and_passed_over) {
  FakePeer fake("probe");
  std::string why;
  const std::string python = bench::find_torch_python(why);
  BOOST_TEST(python != (fake.dir / "python3").string());  // another python, or none ("" and why says so)
  if (python.empty()) BOOST_TEST(has(why, "did not finish importing torch within 0.5 s (stopped it)"), why);
  BOOST_TEST(fake.all_stopped());
}

// Before: the constructor read the peer's first line with no limit.
BOOST_AUTO_TEST_CASE(a_peer_that_never_says_what_it_is_is_stopped_with_a_message) {
  FakePeer fake("start");
  try {
    bench::TorchPeer peer("--quick", "");
    BOOST_FAIL("the peer started: " << peer.status());
  } catch (const std::runtime_error& e) {
    BOOST_TEST(has(e.what(), "the PyTorch peer did not answer within 0.5 s (its first line"), e.what());
    BOOST_TEST(has(e.what(), "AUTOGRAD_PEER_TIMEOUT"), e.what());
  }
  BOOST_TEST(fake.all_stopped());
}

// Before: time() waited for the answer with no limit.
BOOST_AUTO_TEST_CASE(a_peer_that_never_answers_a_request_is_stopped_with_a_message) {
  FakePeer fake("answer");
  bench::TorchPeer peer("--quick", "");
  BOOST_TEST_REQUIRE(peer.running(), peer.status());
  BOOST_TEST(has(peer.status(), "Fake 0.1"), peer.status());
  try {
    peer.time("layernorm_fused", "64x768");
    BOOST_FAIL("the hanging peer answered");
  } catch (const std::runtime_error& e) {
    BOOST_TEST(has(e.what(), "did not answer within 0.5 s (asked for layernorm_fused/64x768)"), e.what());
  }
  BOOST_TEST(!peer.running());
  BOOST_TEST(fake.all_stopped());
  BOOST_CHECK_THROW(peer.time("layernorm_fused", "64x768"), std::runtime_error);  // stopped, not hung
}

// Before: finish() (and the destructor) waited for the exit with no limit.
BOOST_AUTO_TEST_CASE(a_peer_that_does_not_exit_at_the_end_of_its_input_is_stopped) {
  FakePeer fake("exit");
  bench::TorchPeer peer("--quick", "");
  BOOST_TEST_REQUIRE(peer.running(), peer.status());
  BOOST_TEST(!peer.time("c", "1x1").has_value());  // it answers, then ignores the end of its input
  BOOST_TEST(peer.finish() == -1);
  BOOST_TEST(has(peer.error(), "did not exit within 0.5 s of the end of its input (stopped it)"), peer.error());
  BOOST_TEST(fake.all_stopped());
}

BOOST_AUTO_TEST_CASE(a_timeout_that_is_not_a_number_of_seconds_is_refused_by_name) {
  for (const char* bad : {"", "abc", "0", "-1", "nan", "1e9"}) {
    ::setenv("AUTOGRAD_PEER_TIMEOUT", bad, 1);
    BOOST_CHECK_EXCEPTION(bench::peer_timeout(5), std::runtime_error,
                          [](const std::runtime_error& e) { return has(e.what(), "AUTOGRAD_PEER_TIMEOUT='"); });
  }
  ::setenv("AUTOGRAD_PEER_TIMEOUT", "2.5", 1);
  BOOST_TEST(bench::peer_timeout(5) == 2.5);
  ::unsetenv("AUTOGRAD_PEER_TIMEOUT");
  BOOST_TEST(bench::peer_timeout(5) == 5.0);
}
