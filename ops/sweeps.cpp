#include "ops/sweeps.h"

#include "autograd/machine.h"

namespace ag {

const SweepPlan& sweep_plan() {
  static const SweepPlan plan = [] {
    const CacheSizes& caches = cache_sizes();
    SweepPlan p{std::size_t{4} << 20, std::size_t{128} << 10, kVectorRegisters >= 32 ? 8u : 4u};
    if (caches.l2 != 0 && caches.l2_ways != 0 && caches.l2 % caches.l2_ways == 0) p.alias_stride = caches.l2 / caches.l2_ways;
    return p;
  }();
  return plan;
}

}  // namespace ag
