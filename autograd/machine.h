// What the machine is, as the benchmarks report it and a kernel may ask: the
// CPU's name, its data caches and the vector width this build was compiled for.
// A figure measured on one CPU is a claim about that one (bench/README.md), so
// every benchmark header names these.
#pragma once

#include <cstddef>
#include <string>

namespace ag {

// The data caches one core sees, in bytes; 0 where the machine does not say.
struct CacheSizes {
  std::size_t l1d = 0;
  std::size_t l2 = 0;
  std::size_t l3 = 0;
  std::size_t l1d_ways = 0;  // the L1d's associativity: l1d / l1d_ways bytes apart map to the same set
  std::size_t l2_ways = 0;   // the L2's, likewise
  std::string source;  // "sysfs", "CPUID" or "unknown": where the sizes came from
};

// /proc/cpuinfo's "model name", else "unknown CPU".
std::string cpu_model();

// Who made the CPU: "GenuineIntel", "AuthenticAMD" (/proc/cpuinfo's vendor_id,
// else CPUID's leaf 0), or "unknown".
std::string cpu_vendor();

// From /sys/devices/system/cpu/cpu0/cache when the kernel lists it; some
// virtual machines do not, and then from the CPU itself (CPUID: leaf 4 on
// Intel, 0x8000001D or the older 0x80000005/6 on AMD). Read once, then kept.
const CacheSizes& cache_sizes();

// A sysfs size ("48K", "32768K", "1M"; a bare number is bytes) in bytes; 0 if
// the text is not one.
std::size_t parse_cache_size(const std::string& text);

// The widest vector instructions this build may use and how many doubles one
// register holds, e.g. "AVX-512F, 8 doubles" (from the compiler's target
// macros, so it describes the build, not the CPU).
std::string build_vectors();

// "L1d 48 KiB, L2 1 MiB 8-way, L3 32 MiB (sysfs)": cache_sizes() for a header line.
std::string describe_caches(const CacheSizes& caches);

}  // namespace ag
