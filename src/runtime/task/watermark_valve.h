#pragma once
/// Combines the watermarks of a task's input channels (Flink's StatusWatermarkValve, without idleness).

#include <cstdint>
#include <optional>
#include <vector>

namespace sluice::runtime {

/// Tracks the last watermark per input channel; the task's watermark is the minimum over channels and is
/// emitted only when it advances. A channel that delivered EndOfPartition counts as +infinity
/// (Watermark::kMaxTimestamp). A watermark lower than its channel's last one is ignored. Task thread only.
class StatusWatermarkValve {
 public:
  /// `num_channels` >= 1; every channel starts at Watermark::kMinTimestamp.
  explicit StatusWatermarkValve(int num_channels);

  /// A watermark `timestamp` (ms) arrived on `channel`. Returns the new task watermark when it advanced.
  std::optional<int64_t> inputWatermark(int channel, int64_t timestamp);
  /// `channel` ended. Returns the new task watermark when it advanced (all channels ended: kMaxTimestamp).
  std::optional<int64_t> endOfInput(int channel);
  /// The last watermark returned (kMinTimestamp before any).
  int64_t currentWatermark() const { return last_output_; }

 private:
  std::optional<int64_t> recompute();

  std::vector<int64_t> channel_watermarks_;
  int64_t last_output_;
};

}  // namespace sluice::runtime
