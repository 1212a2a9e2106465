#pragma once
/// Key groups: the unit in which keyed state is partitioned, snapshotted and rescaled (Flink's
/// KeyGroupRange and KeyGroupRangeAssignment, flink-checkpointing.md §3.3). Pure values and functions;
/// any thread.

#include <cstdint>

namespace sluice::runtime::state {

/// A contiguous, inclusive range of key groups [start, end] (Flink's KeyGroupRange). Empty when
/// end < start; the default range is empty.
struct KeyGroupRange {
  int32_t start = 0;
  int32_t end = -1;  ///< inclusive

  /// The range [start, end]; an empty range when end < start.
  static KeyGroupRange of(int32_t start, int32_t end) { return KeyGroupRange{start, end}; }
  bool empty() const { return end < start; }
  /// Number of key groups in the range (0 when empty).
  int32_t size() const { return empty() ? 0 : end - start + 1; }
  bool contains(int32_t key_group) const { return key_group >= start && key_group <= end; }
  /// The key groups in both ranges (an empty range when they do not overlap).
  KeyGroupRange intersect(const KeyGroupRange& other) const;
  bool operator==(const KeyGroupRange& o) const {
    return (empty() && o.empty()) || (start == o.start && end == o.end);
  }
};

/// How keys map to key groups and key groups to operator subtasks (Flink's KeyGroupRangeAssignment).
/// The hash functions are those of common/hash.h, which the keyed partitioner uses too: state and records
/// always agree on a key's group.
struct KeyGroupRangeAssignment {
  /// Smallest max parallelism chosen by default (Flink's DEFAULT_LOWER_BOUND_MAX_PARALLELISM).
  static constexpr int32_t kDefaultLowerBoundMaxParallelism = 128;
  /// Largest max parallelism (Flink's UPPER_BOUND_MAX_PARALLELISM, 2^15).
  static constexpr int32_t kUpperBoundMaxParallelism = 1 << 15;

  /// Max parallelism for an operator whose user set none:
  /// min(max(roundUpToPowerOfTwo(p + p/2), 128), 32768). Throws ConfigError when p < 1 or p > 32768.
  static int32_t computeDefaultMaxParallelism(int32_t parallelism);

  /// The key groups owned by subtask `operator_index` of `parallelism` subtasks:
  /// [ceil(i*maxP/p), ((i+1)*maxP - 1)/p] (integer division). Throws ConfigError naming
  /// pipeline.max-parallelism when maxP is out of [1, 32768] or smaller than p, and InternalError when
  /// the index is outside [0, p).
  static KeyGroupRange computeKeyGroupRangeForOperatorIndex(int32_t max_parallelism, int32_t parallelism,
                                                            int32_t operator_index);

  /// Key group of a key hash: murmurHash(folded hash) % maxP (common/hash.h assignToKeyGroup).
  static int32_t assignToKeyGroup(uint64_t key_hash, int32_t max_parallelism);

  /// Subtask owning `key_group`: key_group * p / maxP (Flink's computeOperatorIndexForKeyGroup).
  static int32_t computeOperatorIndexForKeyGroup(int32_t max_parallelism, int32_t parallelism, int32_t key_group);
};

}  // namespace sluice::runtime::state
