#include "runtime/task/watermark_valve.h"

#include <algorithm>

#include "common/error.h"

namespace sluice::runtime {

StatusWatermarkValve::StatusWatermarkValve(int num_channels) {
  SLUICE_CHECK(num_channels >= 1, "a watermark valve needs at least one channel, got {}", num_channels);
  channels_.resize(static_cast<size_t>(num_channels));
}

std::optional<int64_t> StatusWatermarkValve::inputWatermark(int channel, int64_t timestamp) {
  Channel& c = channels_.at(static_cast<size_t>(channel));
  if (idle_ || c.idle || timestamp <= c.watermark) return std::nullopt;
  c.watermark = timestamp;
  // A channel that came back from idleness joins the minimum once it has caught up.
  if (!c.aligned && timestamp >= last_output_) c.aligned = true;
  return advanceToMinOfAligned();
}

ValveOutput StatusWatermarkValve::inputWatermarkStatus(int channel, WatermarkStatus status) {
  Channel& c = channels_.at(static_cast<size_t>(channel));
  ValveOutput out;
  if (c.ended) return out;
  if (status == WatermarkStatus::kIdle && !c.idle) {
    c.idle = true;
    c.aligned = false;
    const bool any_active = std::any_of(channels_.begin(), channels_.end(), [](const Channel& x) { return !x.idle; });
    if (!any_active) {
      // Nothing holds the watermark back any more: flush the highest one (only needed when this channel
      // held the minimum; otherwise the others already moved it as they went idle).
      if (c.watermark == last_output_) {
        int64_t max = Watermark::kMinTimestamp;
        for (const Channel& x : channels_) max = std::max(max, x.watermark);
        if (max > last_output_) {
          last_output_ = max;
          out.watermark = max;
        }
      }
      idle_ = true;
      out.status = WatermarkStatus::kIdle;
    } else if (c.watermark == last_output_) {
      out.watermark = advanceToMinOfAligned();
    }
  } else if (status == WatermarkStatus::kActive && c.idle) {
    c.idle = false;
    if (c.watermark >= last_output_) c.aligned = true;
    if (idle_) {
      idle_ = false;
      out.status = WatermarkStatus::kActive;
    }
  }
  return out;
}

ValveOutput StatusWatermarkValve::endOfInput(int channel) {
  Channel& c = channels_.at(static_cast<size_t>(channel));
  ValveOutput out;
  if (c.ended) return out;
  c.ended = true;
  c.idle = false;
  c.aligned = true;
  c.watermark = Watermark::kMaxTimestamp;
  if (idle_) {
    idle_ = false;
    out.status = WatermarkStatus::kActive;
  }
  out.watermark = advanceToMinOfAligned();
  return out;
}

std::optional<int64_t> StatusWatermarkValve::advanceToMinOfAligned() {
  std::optional<int64_t> min;
  for (const Channel& c : channels_) {
    if (c.aligned) min = min ? std::min(*min, c.watermark) : c.watermark;
  }
  if (!min || *min <= last_output_) return std::nullopt;
  last_output_ = *min;
  return min;
}

}  // namespace sluice::runtime
