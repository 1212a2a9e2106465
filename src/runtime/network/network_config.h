#pragma once
/// Validated network settings read from a Configuration: the buffer debloating settings (Flink's
/// `BufferDebloatConfiguration`) and the buffer counts and network memory size (Flink's
/// `NettyShuffleEnvironmentConfiguration` and `NetworkBufferCalculationResult`). Plain values: any thread.

#include <cstdint>

#include "common/config.h"

namespace sluice::runtime::network {

/// Buffer debloating settings (FLIP-183), mirroring Flink's `BufferDebloatConfiguration`.
struct BufferDebloatConfiguration {
  bool enabled = false;
  int64_t target_ms = 1000;          ///< in-flight data should take this long to consume (ms)
  int64_t period_ms = 200;           ///< recalculation interval (ms)
  int32_t samples = 20;              ///< moving average samples
  int32_t threshold_percentages = 25;
  int32_t max_buffer_size = 32768;   ///< bytes (taskmanager.memory.segment-size)
  int32_t min_buffer_size = 256;     ///< bytes (taskmanager.memory.min-segment-size)
  /// bytes (taskmanager.memory.starting-segment-size, FLINK-36556): where the debloater's moving average
  /// starts and the size producers' buffers start with when debloating is enabled
  int32_t starting_buffer_size = 1024;
  int32_t stable_periods = 10;       ///< Sluice's anti-oscillation window (periods); 0 = Flink's exact rule

  /// Reads and validates the options, like Flink's `BufferDebloatConfiguration.fromConfiguration`:
  /// max > 0, min > 0, samples > 0, max >= min, target > 0 ms, min <= starting <= max (checked whether
  /// or not debloating is enabled, as Flink); also period > 0 ms, threshold in [0, 100], stable-periods >= 0
  /// and sizes that fit an int. Throws ConfigError naming the key. Unlike Flink, a starting-segment-size left
  /// at its default is moved into [min, max] instead of rejected (so `segment-size: 256b` alone is valid).
  static BufferDebloatConfiguration fromConfiguration(const Configuration& config);

  /// Bytes a producer's buffers hold until the consumer announces a size (Flink's
  /// `NettyShuffleEnvironmentConfiguration.startingBufferSize`): the starting size with debloating enabled,
  /// else the full segment.
  int32_t initialBufferSize() const { return enabled ? starting_buffer_size : max_buffer_size; }
};

/// Buffer counts and network memory of a TaskManager (Flink's `NettyShuffleEnvironmentConfiguration`).
struct NetworkBufferConfiguration {
  int32_t segment_size = 32768;           ///< bytes per memory segment
  int32_t buffers_per_channel = 2;        ///< exclusive buffers per input channel
  int32_t floating_buffers_per_gate = 8;  ///< floating buffers per input gate
  int32_t max_buffers_per_channel = 10;   ///< most buffers one subpartition may hold
  int64_t network_memory_min = 64LL << 20;  ///< bytes
  int64_t network_memory_max = 1LL << 30;   ///< bytes
  double network_memory_fraction = 0.1;

  /// Reads and validates the options: segment size in (0, 2^31) and a power of two (Flink's
  /// `checkPowerOfTwo` on the segment size), counts >= 0 (max-buffers-per-channel > 0), 0 <= min <=
  /// max, fraction in [0, 1). Throws ConfigError naming the key.
  static NetworkBufferConfiguration fromConfiguration(const Configuration& config);

  /// The network memory of a TaskManager whose Flink memory (all memory the engine manages) is
  /// `total_flink_memory_bytes`: fraction × total clamped to [min, max] (min == max gives a fixed size),
  /// as Flink's `TaskExecutorFlinkMemoryUtils` derives it. Bytes.
  int64_t networkMemoryBytes(int64_t total_flink_memory_bytes) const;
  /// Number of segments for `networkMemoryBytes(total)`; at least 1.
  int32_t numberOfSegments(int64_t total_flink_memory_bytes) const;
};

}  // namespace sluice::runtime::network
