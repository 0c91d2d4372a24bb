#define BOOST_TEST_MODULE memory
#include <boost/test/unit_test.hpp>

#include <sys/resource.h>

#include <fstream>
#include <functional>
#include <string>

#include "autograd/memory.h"
#include "autograd/tape.h"
#include "ops/ops.h"

// The tape's matrices are freed and allocated again every step; with the
// library's memory policy those pages stay mapped. Counted in minor page
// faults (getrusage), not in time: a count does not depend on the load.

namespace {

long minor_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

// Minor faults over `steps` calls of `step`, after a few untimed ones that
// fault everything in once (the first steps must, under any policy).
long faults_over(int steps, const std::function<void()>& step) {
  for (int i = 0; i < 5; ++i) step();
  const long before = minor_faults();
  for (int i = 0; i < steps; ++i) step();
  return minor_faults() - before;
}

// A small training step: a 256x256 matmul (512 KB matrices, above glibc's
// 128 KB mmap threshold) then composed LayerNorm, forward and backward.
struct Step {
  ag::Tape tape;
  arma::mat x0 = arma::randn(256, 256), w0 = arma::randn(256, 256) * 0.05;
  arma::mat gamma0 = arma::ones(1, 256), beta0 = arma::zeros(1, 256), dy = arma::randn(256, 256);
  void operator()() {
    tape.clear();
    ag::Var x = tape.constant(x0), w = tape.leaf(w0);
    ag::Var gamma = tape.leaf(gamma0), beta = tape.leaf(beta0);
    ag::Var y = ag::layernorm_composed(ag::matmul(x, w), gamma, beta);
    tape.backward(y, dy);
    BOOST_TEST_REQUIRE(w.grad().is_finite());
  }
};

constexpr int kSteps = 100;

// AddressSanitizer brings its own allocator (freed blocks quarantined, large
// ones unmapped): glibc's mallopt settings do not reach it, so the sanitizer
// tree checks the policy's bookkeeping, not the faults or the pages.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kGlibcMalloc = false;
#else
constexpr bool kGlibcMalloc = true;
#endif

// "AnonHugePages:   12288 kB" from /proc/self/smaps_rollup: anonymous memory on 2 MB pages.
long huge_page_kb() {
  std::ifstream in("/proc/self/smaps_rollup");
  std::string key;
  long kb = 0;
  while (in >> key) {
    if (key == "AnonHugePages:" && in >> kb) return kb;
  }
  return -1;
}

// THP on "madvise" (Debian's default): only advised memory gets huge pages.
bool thp_only_when_advised() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  std::getline(in, modes);
  return modes.find("[madvise]") != std::string::npos;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(memory)

// First in this file: no Tape was built before it in this process.
BOOST_AUTO_TEST_CASE(the_first_tape_applies_keep) {
  BOOST_TEST((ag::memory_policy() == ag::MemoryPolicy::GlibcDefaults));  // nothing chosen yet
  ag::Tape tape;
  BOOST_TEST((ag::memory_policy() == ag::MemoryPolicy::Keep));
  BOOST_TEST(std::string(ag::memory_policy_note()).find("M_MMAP_MAX=0") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(repeated_steps_do_not_page_fault) {
  if (!kGlibcMalloc) {
    BOOST_TEST_MESSAGE("AddressSanitizer's allocator: glibc's malloc settings do not apply");
    return;
  }
  Step step;  // its Tape applied Keep (or kept it)
  BOOST_TEST((ag::memory_policy() == ag::MemoryPolicy::Keep));
  const long faults = faults_over(kSteps, std::ref(step));
  // Each step frees and reallocates about 20 matrices of 128 pages each;
  // kept, their pages are reused: well under one fault per step.
  BOOST_TEST(faults < kSteps, faults << " minor faults in " << kSteps << " steps");
}

// The same steps with glibc's defaults fault thousands of times: the count
// above can fail, and it measures what the policy is for.
BOOST_AUTO_TEST_CASE(glibc_defaults_page_fault_every_step) {
  if (!kGlibcMalloc) {
    BOOST_TEST_MESSAGE("AddressSanitizer's allocator: glibc's malloc settings do not apply");
    return;
  }
  Step step;
  ag::set_memory_policy(ag::MemoryPolicy::GlibcDefaults);
  const long faults = faults_over(kSteps, std::ref(step));
  ag::set_memory_policy(ag::MemoryPolicy::Keep);
  BOOST_TEST(ag::Tape().size() == 0u);
  BOOST_TEST((ag::memory_policy() == ag::MemoryPolicy::Keep));  // a later Tape does not override a choice
  BOOST_TEST(faults > 100 * kSteps, faults << " minor faults in " << kSteps << " steps");
}

// Under Keep, Tape::clear() backs the heap a step grew with huge pages, so
// the matrices the next steps reuse sit on 2 MB pages. Asserted only where THP
// is "madvise": with "always" every heap gets them anyway, with "never" none.
BOOST_AUTO_TEST_CASE(cleared_tapes_put_the_grown_heap_on_huge_pages) {
  if (!kGlibcMalloc) {
    BOOST_TEST_MESSAGE("AddressSanitizer's allocator: glibc's malloc settings do not apply");
    return;
  }
  if (!thp_only_when_advised() || huge_page_kb() < 0) {
    BOOST_TEST_MESSAGE("transparent huge pages are not in madvise mode here: nothing to check");
    return;
  }
  const long before = huge_page_kb();
  ag::Tape tape;
  ag::Var x = tape.leaf(arma::mat(2048, 1024, arma::fill::randn));  // 16 MB, and as much again below
  ag::Var y = ag::mul_scalar(x, 2.0);
  BOOST_TEST_REQUIRE(y.value()(0, 0) == 2 * x.value()(0, 0));
  tape.clear();
  BOOST_TEST(huge_page_kb() - before >= 16 * 1024, huge_page_kb() - before << " kB more on huge pages");
}

// A choice made before the first Tape is kept: the Tape applies Keep only
// when the program said nothing.
BOOST_AUTO_TEST_CASE(an_explicit_choice_wins_over_the_tape) {
  ag::set_memory_policy(ag::MemoryPolicy::GlibcDefaults);
  ag::Tape tape;
  BOOST_TEST((ag::memory_policy() == ag::MemoryPolicy::GlibcDefaults));
  ag::set_memory_policy(ag::MemoryPolicy::Keep);
}

BOOST_AUTO_TEST_SUITE_END()
