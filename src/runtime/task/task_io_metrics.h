#pragma once
/// A snapshot of one subtask's IO metrics with Flink's names and meanings (Flink's `TaskIOMetricGroup` and
/// the network `buffers` group). Values are cumulative since the subtask started; rates are derived from
/// two snapshots (or from one and the subtask's running time) by the cluster. Plain values: any thread.

#include <cstdint>
#include <vector>

namespace sluice::runtime {

/// One input gate of a subtask (Flink's per-gate network metrics). Only channels over network buffers
/// count; a gate of in-memory (blocking) channels reports zeros except `channels`.
struct GateIOMetrics {
  int channels = 0;         ///< input channels of the gate
  int buffer_channels = 0;  ///< of which read through network buffers
  /// `inPoolUsage`: data buffers queued for the gate / the credit of its channels
  /// (taskmanager.network.memory.buffers-per-channel each), in [0, 1].
  double in_pool_usage = 0;
  int32_t queued_buffers = 0;  ///< data buffers queued for the gate now
  int64_t num_bytes_in = 0;    ///< `numBytesIn`: bytes read from the gate's buffers
  /// Bytes its producers handed to the gate's channels that the gate has not read yet: the in-flight data
  /// FLIP-183 keeps near throughput × target.
  int64_t in_flight_bytes = 0;
  int32_t debloated_buffer_size =
      0;  ///< `debloatedBufferSize`, bytes (the starting size until the first period; 0: off)
  int64_t estimated_time_to_consume_buffers_ms = 0;  ///< `estimatedTimeToConsumeBuffersMs`
  int64_t buffer_size_announcements = 0;             ///< sizes announced upstream so far
};

/// One result partition (out edge) of a subtask.
struct PartitionIOMetrics {
  int subpartitions = 0;
  int32_t buffers_in_use = 0;          ///< buffers of the partition's LocalBufferPool handed out now
  int32_t max_buffers = 0;             ///< the pool's maximum (0: no network buffers)
  int32_t peak_buffers_in_use = 0;     ///< the most handed out at once so far
  int64_t num_bytes_out = 0;           ///< bytes written to the partition's buffers
  int64_t back_pressured_time_ms = 0;  ///< ms spent waiting for a free buffer of the pool
};

/// One subtask. The three times add up to `running_time_ms` (Flink: busy = neither idle nor back
/// pressured). Idle: waiting for input (a source: nothing available). Back pressured: waiting for a free
/// output buffer; a wait in progress counts once it ends.
struct TaskIOMetrics {
  int64_t running_time_ms = 0;  ///< since invoke() started, until now or its end; 0 before
  int64_t busy_time_ms = 0;     ///< running − idle − back pressured (never negative)
  int64_t idle_time_ms = 0;
  int64_t back_pressured_time_ms = 0;  ///< over all partitions
  bool running = false;                ///< invoke() started and has not returned
  bool is_back_pressured = false;      ///< Flink's `isBackPressured`: waiting for an output buffer now
  int64_t num_records_in = 0;          ///< `numRecordsIn`: records the chain head received (0 for sources)
  int64_t num_records_out = 0;         ///< `numRecordsOut`: records handed to the network outputs
  int64_t num_bytes_in = 0;            ///< `numBytesIn`: over all gates
  int64_t num_bytes_out = 0;           ///< `numBytesOut`: over all partitions
  double in_pool_usage = 0;            ///< `inPoolUsage`: max over gates
  double out_pool_usage = 0;           ///< `outPoolUsage`: buffers in use / max over all partitions, [0, 1]
  int32_t debloated_buffer_size = 0;   ///< `debloatedBufferSize`: min over debloating gates (0: none)
  int64_t estimated_time_to_consume_buffers_ms = 0;  ///< `estimatedTimeToConsumeBuffersMs`: max over gates
  std::vector<GateIOMetrics> gates;
  std::vector<PartitionIOMetrics> partitions;  ///< one per out edge, JobVertex::outputs order
};

}  // namespace sluice::runtime
