#pragma once
/// Elements that flow between operators and tasks besides records (ARCHITECTURE.md "Data").

#include <cstdint>
#include <limits>
#include <variant>

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

/// The producer subtask has finished; no more elements on this channel.
struct EndOfPartition {};

/// What travels through a channel between tasks, in order: SQL rows as RowBatch, DataStream records as
/// ObjectBatch, watermarks, and the end of the producer.
using StreamElement = std::variant<types::RowBatch, ObjectBatchPtr, Watermark, EndOfPartition>;

}  // namespace sluice::runtime
