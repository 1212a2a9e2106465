#pragma once
/// Combines the watermarks and watermark statuses of a task's input channels (Flink's
/// StatusWatermarkValve, FLINK-5017; watermark alignment is not supported).

#include <cstdint>
#include <optional>
#include <vector>

#include "runtime/stream_element.h"

namespace sluice::runtime {

/// What the valve emits for one input, in this order: `status` when it is ACTIVE, then `watermark`, then
/// `status` when it is IDLE (a task announces ACTIVE before it moves event time again, and moves it
/// before it goes IDLE).
struct ValveOutput {
  std::optional<int64_t> watermark;
  std::optional<WatermarkStatus> status;
  bool operator==(const ValveOutput&) const = default;
};

/// Tracks per input channel its last watermark, whether it is idle and whether it is aligned (its
/// watermark has caught up with the task's). The task's watermark is the minimum over the aligned
/// channels and only moves forward (Flink's rules):
///  - a watermark lower than its channel's last one, or arriving on an IDLE channel, is ignored;
///  - an IDLE channel is left out of the minimum, so the others move the task's watermark on;
///  - when every channel is IDLE the task goes IDLE; if the last channel to go idle held the task's
///    watermark, the task's watermark first moves to the maximum over all channels (nothing holds it back);
///  - a channel that becomes ACTIVE again counts for the minimum only once its watermark reaches the
///    task's, so the task's watermark never goes back; the first active channel makes the task ACTIVE;
///  - a channel that delivered EndOfPartition counts as an active channel at Watermark::kMaxTimestamp.
/// Task thread only.
class StatusWatermarkValve {
 public:
  /// `num_channels` >= 1; every channel starts ACTIVE and aligned at Watermark::kMinTimestamp.
  explicit StatusWatermarkValve(int num_channels);

  /// A watermark `timestamp` (ms) arrived on `channel`. Returns the new task watermark when it advanced.
  std::optional<int64_t> inputWatermark(int channel, int64_t timestamp);
  /// A watermark status arrived on `channel`. Returns what the task emits (a repeated status emits nothing).
  ValveOutput inputWatermarkStatus(int channel, WatermarkStatus status);
  /// `channel` ended. Returns what the task emits (all channels ended: the watermark kMaxTimestamp).
  ValveOutput endOfInput(int channel);
  /// The last watermark emitted (kMinTimestamp before any).
  int64_t currentWatermark() const { return last_output_; }
  /// The last status emitted (ACTIVE at the start).
  WatermarkStatus currentStatus() const { return idle_ ? WatermarkStatus::kIdle : WatermarkStatus::kActive; }

 private:
  struct Channel {
    int64_t watermark = Watermark::kMinTimestamp;
    bool idle = false;
    bool aligned = true;
    bool ended = false;
  };
  /// The minimum over aligned channels, when there is one and it exceeds the last output.
  std::optional<int64_t> advanceToMinOfAligned();

  std::vector<Channel> channels_;
  int64_t last_output_ = Watermark::kMinTimestamp;
  bool idle_ = false;
};

}  // namespace sluice::runtime
