#define BOOST_TEST_MODULE memory
#include <boost/test/unit_test.hpp>

#include <malloc.h>
#include <sys/resource.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "autograd/memory.h"
#include "autograd/tape.h"
#include "ops/ops.h"

// The tape's matrices are freed and allocated again every step; with the
// library's memory policy those pages stay mapped. Counted in minor page
// faults (getrusage), not in time: a count does not depend on the load.
// The policy is opt-in: a program that does not ask keeps glibc's defaults.

namespace {

long minor_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

// Bytes malloc holds in blocks of their own mmap (glibc's mallinfo2): 0 under Keep.
std::size_t mapped_bytes() { return mallinfo2().hblkhd; }

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

// Bytes in freed blocks waiting in malloc's fastbins (mallinfo2's fsmblks)
// once 100 small blocks are freed: the per-thread cache takes 7 of a size.
std::size_t fastbin_bytes_after_small_frees() {
  std::vector<void*> blocks(100);
  for (void*& b : blocks) {
    b = std::malloc(48);
    asm volatile("" : : "r"(b) : "memory");  // kept: the pair may not be optimised away
  }
  for (void* b : blocks) std::free(b);
  return mallinfo2().fsmblks;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(memory)

// First in this file: nothing asked for a policy before it in this process.
// 64 MB is above glibc's largest dynamic mmap threshold (32 MB), so under its
// defaults such a block gets a mapping of its own; under Keep it never does.
BOOST_AUTO_TEST_CASE(a_library_user_who_does_not_ask_keeps_glibcs_defaults) {
  {
    ag::Tape tape;
    ag::Var x = tape.leaf(arma::mat(1024, 8192, arma::fill::ones));  // 64 MB
    BOOST_TEST_REQUIRE(ag::sum(x).item() == 1024.0 * 8192);
    tape.clear();
    BOOST_TEST(!ag::memory_policy_chosen());
    BOOST_TEST((ag::memory_policy() == ag::MemoryPolicy::GlibcDefaults));
    BOOST_TEST(std::string(ag::memory_policy_note()).find("untouched") != std::string::npos);
    if (kGlibcMalloc) {
      arma::mat big(1024, 8192, arma::fill::ones);
      BOOST_TEST(mapped_bytes() >= big.n_elem * sizeof(double), mapped_bytes() << " bytes in mmap'd blocks");
      // Read after the count: a matrix nothing reads is one Clang may never allocate (malloc and free elided).
      BOOST_TEST(arma::accu(big) == 1024.0 * 8192);
    }
  }
  ag::use_memory_policy();
  BOOST_TEST((ag::memory_policy() == ag::MemoryPolicy::Keep));
  BOOST_TEST(std::string(ag::memory_policy_note()).find("M_MMAP_MAX=0") != std::string::npos);
  if (kGlibcMalloc) {  // 1 MB, above glibc's 128 KB threshold; small, so the heap barely grows for the tests below
    const std::size_t before = mapped_bytes();
    arma::mat block(128, 1024, arma::fill::ones);
    BOOST_TEST(mapped_bytes() == before, "Keep maps no block of its own");
    BOOST_TEST(arma::accu(block) == 128.0 * 1024);  // so that it is allocated (above)
  }
}

BOOST_AUTO_TEST_CASE(repeated_steps_do_not_page_fault) {
  if (!kGlibcMalloc) {
    BOOST_TEST_MESSAGE("AddressSanitizer's allocator: glibc's malloc settings do not apply");
    return;
  }
  ag::use_memory_policy();
  Step step;
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
  ag::use_memory_policy();
  BOOST_TEST((ag::memory_policy() == ag::MemoryPolicy::Keep));  // asking again does not override a choice
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
  ag::use_memory_policy();
  const long before = huge_page_kb();
  ag::Tape tape;
  ag::Var x = tape.leaf(arma::mat(2048, 1024, arma::fill::randn));  // 16 MB, and as much again below
  ag::Var y = ag::mul_scalar(x, 2.0);
  BOOST_TEST_REQUIRE(y.value()(0, 0) == 2 * x.value()(0, 0));
  tape.clear();
  BOOST_TEST(huge_page_kb() - before >= 16 * 1024, huge_page_kb() - before << " kB more on huge pages");
}

// Keep turns the fastbins off: with them, each free or malloc of a large
// matrix first merges every small freed block waiting there (memory.h).
BOOST_AUTO_TEST_CASE(keep_turns_off_the_fastbins) {
  if (!kGlibcMalloc) {
    BOOST_TEST_MESSAGE("AddressSanitizer's allocator: glibc's malloc settings do not apply");
    return;
  }
  ag::set_memory_policy(ag::MemoryPolicy::GlibcDefaults);
  const std::size_t with_defaults = fastbin_bytes_after_small_frees();
  ag::set_memory_policy(ag::MemoryPolicy::Keep);
  const std::size_t kept = fastbin_bytes_after_small_frees();
  BOOST_TEST(with_defaults > 0u, with_defaults << " bytes in fastbins with glibc's defaults");
  BOOST_TEST(kept == 0u, kept << " bytes in fastbins under Keep");
}

// Where Armadillo's matrices live (CMakeLists.txt, autograd_engine): below 64 KiB
// from malloc, not posix_memalign, so 16-byte aligned as Armadillo asks
// (memory::is_aligned); from 64 KiB on on a 64-byte cache line. The definition
// reaches this file as it reaches every program built on the libraries.
BOOST_AUTO_TEST_CASE(armadillo_matrices_small_from_malloc_large_on_a_cache_line) {
#if defined(ARMA_ALIEN_MEM_ALLOC_FUNCTION) && defined(ARMA_ALIEN_MEM_FREE_FUNCTION)
  BOOST_TEST(arma::arma_config::extra_code);
  std::vector<arma::mat> kept;  // held, so no two of them reuse one block
  for (arma::uword n : {5u, 12u, 16u, 40u, 90u, 91u, 100u, 300u, 1000u}) {
    arma::mat& m = kept.emplace_back(n, n, arma::fill::ones);
    const auto address = reinterpret_cast<std::uintptr_t>(m.memptr());
    BOOST_TEST(arma::memory::is_aligned(m.memptr()), n << "x" << n);
    if (n * n * sizeof(double) >= 65536) BOOST_TEST(address % 64 == 0u, n << "x" << n << " at " << address % 64 << " mod 64");
    BOOST_TEST(arma::accu(m) == static_cast<double>(n * n));
  }
  kept.clear();  // given back with free
#else
  BOOST_FAIL("ARMA_ALIEN_MEM_ALLOC_FUNCTION is not defined: Armadillo asks posix_memalign for its matrices");
#endif
}

// An explicit choice wins over a later ask: the benchmarks' A/B set GlibcDefaults
// and then run the trainers, which ask for Keep.
BOOST_AUTO_TEST_CASE(an_explicit_choice_wins_over_a_later_ask) {
  ag::set_memory_policy(ag::MemoryPolicy::GlibcDefaults);
  ag::use_memory_policy();
  ag::Tape tape;
  BOOST_TEST((ag::memory_policy() == ag::MemoryPolicy::GlibcDefaults));
  ag::set_memory_policy(ag::MemoryPolicy::Keep);
}

BOOST_AUTO_TEST_SUITE_END()
