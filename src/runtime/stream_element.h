#pragma once
/// Elements that flow between operators and tasks besides records (ARCHITECTURE.md "Data").

#include <cstdint>
#include <limits>
#include <variant>

#include "runtime/checkpoint/checkpoint_types.h"
#include "runtime/object_batch.h"
#include "types/row_batch.h"

namespace sluice::runtime {

/// Event-time progress: no more rows with timestamp <= `timestamp` (ms) will follow.
struct Watermark {
  int64_t timestamp;
  /// Emitted when a bounded input ends, so every event-time window fires (Flink's MAX_WATERMARK).
  static constexpr int64_t kMaxTimestamp = std::numeric_limits<int64_t>::max();
  static constexpr int64_t kMinTimestamp = std::numeric_limits<int64_t>::min();
};

/// Whether a stream may hold back event time (Flink's WatermarkStatus, FLINK-5017). An IDLE stream
/// (a source without data or without splits for a while) is left out of the minimum that combines
/// watermarks downstream (StatusWatermarkValve), so it does not stall event time; ACTIVE puts it back.
/// A stream starts ACTIVE. A producer announces ACTIVE before it emits a watermark again.
enum class WatermarkStatus : uint8_t { kActive = 0, kIdle = 1 };

/// "ACTIVE" or "IDLE" (Flink's names).
inline const char* watermarkStatusName(WatermarkStatus s) { return s == WatermarkStatus::kIdle ? "IDLE" : "ACTIVE"; }

/// Attributes of the records that follow on a stream (Flink's RecordAttributes, FLIP-327, @Experimental).
/// `is_backlog`: the records are backlog (old data being caught up on), so operators may trade latency for
/// throughput (sort by key, skip per-record state work) and the coordinator may space out checkpoints
/// (FLIP-309). Sources emit it when their backlog status changes; operators receive it through
/// processRecordAttributes; a task combines it over its channels (RecordAttributesCombiner). Not part of a
/// checkpoint: sources emit it again after a restore.
struct RecordAttributes {
  bool is_backlog = false;
  bool operator==(const RecordAttributes&) const = default;
};

/// The producer subtask has finished; no more elements on this channel.
struct EndOfPartition {};

using checkpoint::CheckpointBarrier;

/// What travels through a channel between tasks, in order: SQL rows as RowBatch, DataStream records as
/// ObjectBatch, watermarks, watermark statuses, the end of the producer, checkpoint barriers (which cut the
/// stream into the parts before and after a checkpoint) and record attributes (backlog or not).
using StreamElement = std::variant<types::RowBatch, ObjectBatchPtr, Watermark, WatermarkStatus, EndOfPartition,
                                   CheckpointBarrier, RecordAttributes>;

}  // namespace sluice::runtime
