#include "runtime/state/key_group.h"

#include <algorithm>

#include "common/error.h"
#include "common/hash.h"

namespace sluice::runtime::state {

KeyGroupRange KeyGroupRange::intersect(const KeyGroupRange& other) const {
  return KeyGroupRange{std::max(start, other.start), std::min(end, other.end)};
}

namespace {
int32_t roundUpToPowerOfTwo(int32_t x) {
  int32_t p = 1;
  while (p < x) p <<= 1;
  return p;
}
}  // namespace

int32_t KeyGroupRangeAssignment::computeDefaultMaxParallelism(int32_t parallelism) {
  if (parallelism < 1 || parallelism > kUpperBoundMaxParallelism) {
    throw ConfigError(fmt::format("parallelism.default: parallelism {} is outside [1, {}]", parallelism,
                                  kUpperBoundMaxParallelism));
  }
  return std::min(std::max(roundUpToPowerOfTwo(parallelism + parallelism / 2), kDefaultLowerBoundMaxParallelism),
                  kUpperBoundMaxParallelism);
}

KeyGroupRange KeyGroupRangeAssignment::computeKeyGroupRangeForOperatorIndex(int32_t max_parallelism,
                                                                            int32_t parallelism,
                                                                            int32_t operator_index) {
  if (max_parallelism < 1 || max_parallelism > kUpperBoundMaxParallelism) {
    throw ConfigError(fmt::format("pipeline.max-parallelism: {} is outside [1, {}]", max_parallelism,
                                  kUpperBoundMaxParallelism));
  }
  if (parallelism < 1 || parallelism > max_parallelism) {
    throw ConfigError(fmt::format(
        "pipeline.max-parallelism: the maximum parallelism {} must not be smaller than the parallelism {}",
        max_parallelism, parallelism));
  }
  SLUICE_CHECK(operator_index >= 0 && operator_index < parallelism, "operator index {} of parallelism {}",
               operator_index, parallelism);
  const int64_t i = operator_index;
  const int64_t maxp = max_parallelism;
  const int64_t p = parallelism;
  return KeyGroupRange{static_cast<int32_t>((i * maxp + p - 1) / p), static_cast<int32_t>(((i + 1) * maxp - 1) / p)};
}

int32_t KeyGroupRangeAssignment::assignToKeyGroup(uint64_t key_hash, int32_t max_parallelism) {
  return sluice::assignToKeyGroup(key_hash, max_parallelism);
}

int32_t KeyGroupRangeAssignment::computeOperatorIndexForKeyGroup(int32_t max_parallelism, int32_t parallelism,
                                                                 int32_t key_group) {
  return sluice::operatorIndexForKeyGroup(max_parallelism, parallelism, key_group);
}

}  // namespace sluice::runtime::state
