#include "runtime/network/buffer_debloater.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "common/error.h"

namespace sluice::runtime::network {

void ThroughputCalculator::incomingDataSize(int64_t bytes) {
  resumeMeasurement();
  accumulated_bytes_ += bytes;
}

void ThroughputCalculator::pauseMeasurement() {
  if (start_ms_ != kNotTracked) measured_ms_ += clock_.relativeTimeMillis() - start_ms_;
  start_ms_ = kNotTracked;
}

void ThroughputCalculator::resumeMeasurement() {
  if (start_ms_ == kNotTracked) start_ms_ = clock_.relativeTimeMillis();
}

int64_t ThroughputCalculator::calculateThroughput() {
  if (start_ms_ != kNotTracked) {
    const int64_t now = clock_.relativeTimeMillis();
    measured_ms_ += now - start_ms_;
    start_ms_ = now;
  }
  const int64_t throughput = calculateThroughput(accumulated_bytes_, measured_ms_);
  accumulated_bytes_ = 0;
  measured_ms_ = 0;
  return throughput;
}

int64_t ThroughputCalculator::calculateThroughput(int64_t bytes, int64_t time_ms) {
  SLUICE_CHECK(bytes >= 0, "data size must not be negative, got {}", bytes);
  SLUICE_CHECK(time_ms >= 0, "time must not be negative, got {}", time_ms);
  if (time_ms == 0) return current_throughput_;
  current_throughput_ = static_cast<int64_t>(static_cast<double>(bytes) / static_cast<double>(time_ms) * 1000.0);
  return current_throughput_;
}

BufferSizeEMA::BufferSizeEMA(int32_t starting_size, int32_t max_size, int32_t min_size, int64_t samples)
    : max_size_(max_size),
      min_size_(min_size),
      alpha_(2.0 / (static_cast<double>(samples) + 1.0)),
      last_(std::clamp(starting_size, min_size, max_size)) {
  SLUICE_CHECK(samples > 0 && min_size > 0 && max_size >= min_size, "bad buffer size EMA settings");
}

int32_t BufferSizeEMA::calculateBufferSize(int64_t total_bytes, int32_t buffers) {
  SLUICE_CHECK(total_bytes >= 0, "desired in-flight bytes must not be negative, got {}", total_bytes);
  SLUICE_CHECK(buffers > 0, "buffers in use must be positive, got {}", buffers);
  // The ×2 cap makes growth as fast as shrinking (one period can at most halve or double the input).
  // Integer bytes, as Flink's (int) cast of the minimum.
  const double instant = std::floor(std::min(static_cast<double>(total_bytes / buffers), 2.0 * last_));
  last_ += alpha_ * (instant - last_);
  last_ = std::clamp(last_, static_cast<double>(min_size_), static_cast<double>(max_size_));
  return static_cast<int32_t>(std::llround(last_));
}

BufferDebloater::BufferDebloater(const BufferDebloatConfiguration& config)
    : target_ms_(config.target_ms),
      max_size_(config.max_buffer_size),
      min_size_(config.min_buffer_size),
      threshold_factor_(config.threshold_percentages / 100.0),
      stable_periods_(config.stable_periods),
      ema_(config.starting_buffer_size, config.max_buffer_size, config.min_buffer_size, config.samples),
      last_buffer_size_(std::clamp(config.starting_buffer_size, config.min_buffer_size, config.max_buffer_size)) {}

std::optional<int32_t> BufferDebloater::recalculateBufferSize(int64_t throughput, int32_t buffers_in_use) {
  const int32_t buffers = std::max(1, buffers_in_use);
  const int64_t t = std::max<int64_t>(0, throughput);
  // Saturate instead of overflowing for absurd throughputs.
  const int64_t desired_total = t > std::numeric_limits<int64_t>::max() / target_ms_
                                    ? std::numeric_limits<int64_t>::max()
                                    : t * target_ms_ / 1000;
  const int32_t new_size = ema_.calculateBufferSize(desired_total, buffers);
  last_estimated_ms_ = static_cast<int64_t>(new_size) * buffers * 1000 / std::max<int64_t>(1, t);

  int32_t candidate = new_size;
  if (stable_periods_ > 0) {
    recent_sizes_.push_back(new_size);
    while (static_cast<int32_t>(recent_sizes_.size()) > stable_periods_) recent_sizes_.pop_front();
    if (static_cast<int32_t>(recent_sizes_.size()) < stable_periods_) return std::nullopt;
    candidate = stableSize();
  }
  if (flinkSkipUpdate(candidate)) return std::nullopt;
  last_buffer_size_ = candidate;
  return candidate;
}

bool BufferDebloater::flinkSkipUpdate(int32_t new_size) const {
  if (new_size == last_buffer_size_) return true;
  if (new_size <= min_size_ || new_size >= max_size_) return false;
  const int32_t delta = static_cast<int32_t>(last_buffer_size_ * threshold_factor_);
  return std::abs(new_size - last_buffer_size_) < delta;
}

int32_t BufferDebloater::stableSize() const {
  // The window mean cancels swings whose period divides the window and damps every faster one, so the
  // residual ripple stays below the announcement threshold.
  int64_t sum = 0;
  for (int32_t s : recent_sizes_) sum += s;
  return static_cast<int32_t>(std::llround(static_cast<double>(sum) / static_cast<double>(recent_sizes_.size())));
}

}  // namespace sluice::runtime::network
