#include "ops/sweeps.h"

#include "autograd/machine.h"

namespace ag {

const SweepPlan& sweep_plan() {
  static const SweepPlan plan = [] {
    const CacheSizes& caches = cache_sizes();
    SweepPlan p{std::size_t{4} << 20, std::size_t{128} << 10, cpu_vendor() == "GenuineIntel",
                kVectorRegisters >= 32 ? 8u : 4u, 4096, 8};
    if (caches.l2 != 0 && caches.l2_ways != 0 && caches.l2 % caches.l2_ways == 0) p.alias_stride = caches.l2 / caches.l2_ways;
    if (caches.l1d != 0 && caches.l1d_ways != 0 && caches.l1d % caches.l1d_ways == 0) {
      p.l1_alias_stride = caches.l1d / caches.l1d_ways;
      p.l1_ways = caches.l1d_ways;
    }
    return p;
  }();
  return plan;
}

}  // namespace ag
