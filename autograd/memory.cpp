#include "autograd/memory.h"

#include <sys/mman.h>
#include <unistd.h>

// mallopt and its M_* settings: glibc's (and emscripten's, without the
// settings). macOS has no <malloc.h>: there the policy is recorded but changes
// nothing, as on any allocator without these settings.
#if __has_include(<malloc.h>)
#include <malloc.h>
#endif
// The heap is the sbrk heap and mallopt can keep blocks in it: glibc only.
#if defined(M_MMAP_MAX) && defined(__GLIBC__)
#define AUTOGRAD_GLIBC_MALLOC 1
#endif

#include <cstdint>

#include <atomic>
#include <mutex>

namespace ag {

namespace {

std::mutex g_mutex;
std::atomic<bool> g_chosen{false};  // a program chose a policy (set_memory_policy or use_memory_policy)
MemoryPolicy g_policy = MemoryPolicy::GlibcDefaults;

// glibc's documented defaults (mallopt(3)); setting them explicitly turns off
// its dynamic mmap threshold, which would otherwise grow after the first free.
constexpr int kGlibcMmapMax = 65536;
constexpr int kGlibcThreshold = 128 * 1024;
constexpr int kGlibcMaxFast = 64 * static_cast<int>(sizeof(std::size_t)) / 4;  // 128 bytes on 64 bits
constexpr int kKeepTrimThreshold = 2147483647;  // 2 GB: the largest value mallopt takes

// MADV_COLLAPSE from <linux/mman.h> (Linux 6.1); glibc 2.36's <sys/mman.h> does not define it yet.
constexpr int kMadvCollapse = 25;

char* g_heap_start = nullptr;    // the heap's end when Keep was applied
char* g_advised_end = nullptr;   // [g_heap_start, g_advised_end) is advised already

void apply(MemoryPolicy policy) {
  if (policy == MemoryPolicy::Keep) {
#if defined(AUTOGRAD_GLIBC_MALLOC)  // emscripten's <malloc.h> (the live page) has no mallopt settings, macOS none
    if (g_heap_start == nullptr) g_heap_start = g_advised_end = static_cast<char*>(sbrk(0));
    mallopt(M_MMAP_MAX, 0);                      // every block from the heap, none mapped afresh
    mallopt(M_TRIM_THRESHOLD, kKeepTrimThreshold);  // and the heap is not given back
    mallopt(M_MXFAST, 0);                        // no fastbins (autograd/memory.h)
#endif
  } else {
#if defined(AUTOGRAD_GLIBC_MALLOC)
    mallopt(M_MMAP_MAX, kGlibcMmapMax);
    mallopt(M_MMAP_THRESHOLD, kGlibcThreshold);
    mallopt(M_TRIM_THRESHOLD, kGlibcThreshold);
    mallopt(M_MXFAST, kGlibcMaxFast);
#endif
  }
  g_policy = policy;
  g_chosen.store(true, std::memory_order_release);
}

}  // namespace

void set_memory_policy(MemoryPolicy policy) {
  std::lock_guard<std::mutex> lock(g_mutex);
  apply(policy);
}

MemoryPolicy memory_policy() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_policy;
}

bool memory_policy_chosen() { return g_chosen.load(std::memory_order_acquire); }

void use_memory_policy() {
  if (g_chosen.load(std::memory_order_acquire)) return;  // the common case: one load per Tape
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!g_chosen.load(std::memory_order_relaxed)) apply(MemoryPolicy::Keep);
}

void back_heap_with_huge_pages() {
#if defined(AUTOGRAD_GLIBC_MALLOC) && defined(MADV_HUGEPAGE)  // Linux's transparent huge pages
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;  // one transparent huge page on x86-64
  if (!g_chosen.load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_policy != MemoryPolicy::Keep || g_heap_start == nullptr) return;
  char* const end = static_cast<char*>(sbrk(0));
  // Whole huge pages inside the part of the heap that grew since last time.
  const std::uintptr_t first = (reinterpret_cast<std::uintptr_t>(g_advised_end) + kHuge - 1) / kHuge * kHuge;
  const std::uintptr_t last = reinterpret_cast<std::uintptr_t>(end) / kHuge * kHuge;
  if (last <= first) return;
  void* const from = reinterpret_cast<void*>(first);
  madvise(from, last - first, MADV_HUGEPAGE);  // pages faulted in from now on: 2 MB at a time
  madvise(from, last - first, kMadvCollapse);  // and those already faulted in, now (Linux 6.1+; else EINVAL, ignored)
  g_advised_end = reinterpret_cast<char*>(last);
#endif
}

const char* memory_policy_note() {
  return memory_policy() == MemoryPolicy::Keep
             ? "freed memory kept for reuse (M_MMAP_MAX=0, M_TRIM_THRESHOLD=2 GB, no fastbins), the heap on huge pages "
               "from Tape::clear(); ag::MemoryPolicy::Keep"
             : memory_policy_chosen() ? "glibc defaults (mmap and trim above 128 KB; ag::MemoryPolicy::GlibcDefaults)"
                                      : "glibc's defaults, untouched (the program did not ask for ag::use_memory_policy())";
}

}  // namespace ag
