// Memory that stays put: how this process's malloc treats freed matrices.
//
// A training step records a tape, runs backward and clears it, so every step
// frees its matrices and allocates the same sizes again. glibc's defaults give
// large freed blocks back to the kernel (a block of 128 KB or more is mmap'd
// and munmap'd; a free heap top above 128 KB is trimmed), so the next step
// page-faults every page of them in again, which can cost more than the
// arithmetic. MemoryPolicy::Keep serves every block from the heap and never
// trims it: freed pages are reused as they are, and the process keeps its peak
// heap for its lifetime (reused by later steps, not leaked). Keep also turns
// off malloc's fastbins, because with them every large malloc or free first
// merges all the small freed blocks waiting there (malloc_consolidate), and a
// step frees hundreds of large matrices among thousands of small blocks. The
// glibc tunables MALLOC_MMAP_MAX_=0, MALLOC_TRIM_THRESHOLD_ and
// glibc.malloc.mxfast=0 (in GLIBC_TUNABLES) do the same from outside a
// program. What each part saves, measured: docs/performance.md, "Memory that
// stays put".
//
// Opt-in: malloc's settings belong to the whole process, so the library
// changes none unless the program asks (STYLE.md). use_memory_policy() asks
// for Keep (the autograd program, the benchmarks and the lessons call it;
// ag::train does not: it is a library function); set_memory_policy() chooses
// either. A program that does neither keeps glibc's defaults, untouched.
#pragma once

namespace ag {

enum class MemoryPolicy {
  Keep,           // mallopt(M_MMAP_MAX, 0), M_TRIM_THRESHOLD of 2 GB, M_MXFAST 0: freed memory is reused
  GlibcDefaults,  // mmap above 128 KB, trim above 128 KB, fastbins to 128 bytes (glibc's static defaults)
};

// Sets the policy now, for the whole process (malloc's settings are global).
void set_memory_policy(MemoryPolicy policy);

// The program asks for Keep: applied unless a policy was chosen already (an
// earlier set_memory_policy wins). Cheap after the first call.
void use_memory_policy();

// Whether a program chose a policy; until then the library has changed nothing.
bool memory_policy_chosen();

// The policy in force: GlibcDefaults until a program asks for Keep.
MemoryPolicy memory_policy();

// Under Keep, backs the part of the heap that grew since the last call with
// transparent huge pages (madvise MADV_HUGEPAGE, then MADV_COLLAPSE for pages
// already there). Called by Tape::clear(): by then a step has grown the heap
// to what the next steps reuse. A large matrix walked column by column
// touches one 4 KB page per column per row strip; 2 MB pages cut the TLB
// misses. Does nothing where the kernel has no THP (or THP is "never").
void back_heap_with_huge_pages();

// One line for a report: "freed memory kept for reuse (M_MMAP_MAX=0, ...)".
const char* memory_policy_note();

}  // namespace ag
