#include "runtime/task/watermark_valve.h"

#include <algorithm>

#include "common/error.h"
#include "runtime/stream_element.h"

namespace sluice::runtime {

StatusWatermarkValve::StatusWatermarkValve(int num_channels)
    : channel_watermarks_(static_cast<size_t>(num_channels), Watermark::kMinTimestamp),
      last_output_(Watermark::kMinTimestamp) {
  SLUICE_CHECK(num_channels >= 1, "a watermark valve needs at least one channel, got {}", num_channels);
}

std::optional<int64_t> StatusWatermarkValve::inputWatermark(int channel, int64_t timestamp) {
  int64_t& current = channel_watermarks_[static_cast<size_t>(channel)];
  if (timestamp <= current) return std::nullopt;
  const bool was_min = current <= last_output_;
  current = timestamp;
  // Only the channels holding the minimum can move it.
  if (!was_min) return std::nullopt;
  return recompute();
}

std::optional<int64_t> StatusWatermarkValve::endOfInput(int channel) {
  channel_watermarks_[static_cast<size_t>(channel)] = Watermark::kMaxTimestamp;
  return recompute();
}

std::optional<int64_t> StatusWatermarkValve::recompute() {
  const int64_t m = *std::min_element(channel_watermarks_.begin(), channel_watermarks_.end());
  if (m <= last_output_) return std::nullopt;
  last_output_ = m;
  return m;
}

}  // namespace sluice::runtime
