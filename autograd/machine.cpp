#include "autograd/machine.h"

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace ag {

namespace {
// The first "KEY : value" line of /proc/cpuinfo's, its value; empty when there is none.
std::string cpuinfo_field(const char* key) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    const std::size_t colon = line.find(':');
    if (line.rfind(key, 0) == 0 && colon != std::string::npos && colon + 2 <= line.size()) return line.substr(colon + 2);
  }
  return "";
}
}  // namespace

std::string cpu_model() {
  const std::string model = cpuinfo_field("model name");
  return model.empty() ? "unknown CPU" : model;
}

std::string cpu_vendor() {
  const std::string vendor = cpuinfo_field("vendor_id");
  if (!vendor.empty()) return vendor;
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  __cpuid(0, a, b, c, d);
  char name[13] = {};
  std::memcpy(name, &b, 4);
  std::memcpy(name + 4, &d, 4);
  std::memcpy(name + 8, &c, 4);
  if (name[0] != 0) return name;
#endif
  return "unknown";
}

std::size_t parse_cache_size(const std::string& text) {
  std::size_t i = 0;
  std::size_t value = 0;
  // Digits stop being read before value * 10 + 9, and then value << 20, could wrap:
  // 2^40 with a 64-bit size_t, 2^8 with WebAssembly's 32 bits (where 1 << 40 was undefined).
  constexpr std::size_t kLimit = std::numeric_limits<std::size_t>::max() >> 24;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) && value < kLimit) {
    value = value * 10 + static_cast<std::size_t>(text[i++] - '0');
  }
  if (i == 0) return 0;
  const std::string unit = text.substr(i);
  if (unit.empty() || unit == "\n") return value;
  if (unit == "K" || unit == "K\n") return value << 10;
  if (unit == "M" || unit == "M\n") return value << 20;
  return 0;
}

namespace {

std::string read_word(const std::string& path) {
  std::ifstream in(path);
  std::string word;
  in >> word;
  return word;
}

// sysfs: cpu0/cache/indexN/{level,type,size}, one folder per cache.
CacheSizes from_sysfs() {
  CacheSizes caches;
  for (int index = 0; index < 8; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    const std::string level = read_word(dir + "level");
    const std::string type = read_word(dir + "type");
    const std::size_t size = parse_cache_size(read_word(dir + "size"));
    if (level.empty()) break;
    const std::size_t ways = std::strtoul(read_word(dir + "ways_of_associativity").c_str(), nullptr, 10);
    if (level == "1" && type == "Data") caches.l1d = size, caches.l1d_ways = ways;
    if (level == "2" && type != "Instruction") caches.l2 = size, caches.l2_ways = ways;
    if (level == "3" && type != "Instruction") caches.l3 = size;
  }
  if (caches.l1d || caches.l2 || caches.l3) caches.source = "sysfs";
  return caches;
}

#if defined(__x86_64__) || defined(__i386__)
// The deterministic cache leaves (Intel's 4, AMD's 0x8000001D) share one layout.
bool from_cache_leaf(unsigned leaf, CacheSizes& caches) {
  unsigned top = 0, b = 0, c = 0, d = 0;
  __cpuid(leaf & 0x80000000u, top, b, c, d);
  if (top < leaf) return false;
  for (unsigned sub = 0; sub < 16; ++sub) {
    unsigned a = 0;
    __cpuid_count(leaf, sub, a, b, c, d);
    const unsigned type = a & 31u;  // 1 data, 2 instruction, 3 unified; 0 ends the list
    if (type == 0) break;
    const unsigned level = (a >> 5) & 7u;
    const std::size_t size = std::size_t{((b >> 22) & 1023u) + 1} * (((b >> 12) & 1023u) + 1) * ((b & 4095u) + 1) * (c + std::size_t{1});
    if (type == 2) continue;
    const std::size_t ways = ((b >> 22) & 1023u) + 1;
    if (level == 1) caches.l1d = size, caches.l1d_ways = ways;
    if (level == 2) caches.l2 = size, caches.l2_ways = ways;
    if (level == 3) caches.l3 = size;
  }
  return caches.l1d != 0;
}

CacheSizes from_cpuid() {
  CacheSizes caches;
  unsigned a = 0, b = 0, c = 0, d = 0;
  __cpuid(0, a, b, c, d);
  const bool amd = b == 0x68747541u;  // "Auth"enticAMD
  if (from_cache_leaf(amd ? 0x8000001Du : 4u, caches)) {
    caches.source = "CPUID";
    return caches;
  }
  __cpuid(0x80000000u, a, b, c, d);
  if (amd && a >= 0x80000006u) {
    __cpuid(0x80000005u, a, b, c, d);
    caches.l1d = std::size_t{c >> 24} << 10;
    caches.l1d_ways = (c >> 16) & 255u;  // 255: fully associative (then nothing aliases: l1d_ways 0 says so)
    if (caches.l1d_ways == 255u) caches.l1d_ways = 0;
    __cpuid(0x80000006u, a, b, c, d);
    caches.l2 = std::size_t{c >> 16} << 10;
    // Its associativity, coded in bits 15-12 (AMD's table: 6 is 8-way, 8 is 16-way, ...).
    constexpr unsigned kWays[16] = {0, 1, 2, 0, 4, 0, 8, 0, 16, 0, 32, 48, 64, 96, 128, 0};
    caches.l2_ways = kWays[(c >> 12) & 15u];
    caches.l3 = std::size_t{d >> 18} << 19;  // in units of 512 KiB
    caches.source = "CPUID";
  }
  return caches;
}
#else
CacheSizes from_cpuid() { return {}; }
#endif

std::string bytes_text(std::size_t bytes) {
  if (bytes == 0) return "?";
  if (bytes % (std::size_t{1} << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes >> 10) + " KiB";
}

}  // namespace

const CacheSizes& cache_sizes() {
  static const CacheSizes caches = [] {
    CacheSizes found = from_sysfs();
    if (found.source.empty()) found = from_cpuid();
    if (found.source.empty()) found.source = "unknown";
    return found;
  }();
  return caches;
}

std::string describe_caches(const CacheSizes& caches) {
  auto ways = [](std::size_t n) { return n ? " " + std::to_string(n) + "-way" : std::string(); };
  return "L1d " + bytes_text(caches.l1d) + ways(caches.l1d_ways) + ", L2 " + bytes_text(caches.l2) + ways(caches.l2_ways) +
         ", L3 " + bytes_text(caches.l3) +
         " (" + caches.source + ")";
}

std::string build_vectors() {
#if defined(__AVX512F__)
  return "AVX-512F, 8 doubles";
#elif defined(__AVX2__)
  return "AVX2, 4 doubles";
#elif defined(__AVX__)
  return "AVX, 4 doubles";
#elif defined(__SSE2__)
  return "SSE2, 2 doubles";
#elif defined(__wasm_simd128__)
  return "WebAssembly SIMD128, 2 doubles";
#else
  return "scalar";
#endif
}

}  // namespace ag
