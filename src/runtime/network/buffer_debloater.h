#pragma once
/// Buffer debloating (FLIP-183): measure a gate's throughput with idle time excluded
/// (`ThroughputCalculator`, Flink's `ThroughputCalculator`), smooth the per-buffer size with an exponential
/// moving average (`BufferSizeEMA`, Flink's `BufferSizeEMA`) and decide when to announce a new size
/// upstream (`BufferDebloater`, Flink's `BufferDebloater`).
///
/// Beyond Flink (FLINK-24230, the size swinging back and forth under steady load): with
/// `stable_periods` = W > 0 the announcement rule (threshold, bounds) is applied to the mean of the last W
/// smoothed sizes instead of the latest one, and nothing is announced before W periods were seen. The
/// moving average over W periods cancels swings of the measured throughput whose period divides W and
/// damps every faster one, so under a load that is steady over W periods the announced size stays put; a
/// lasting change is still followed, a few periods later than Flink. W = 0 is Flink's exact rule.
///
/// Threading: all three are used by the task thread only (Flink's mailbox action), not thread-safe.

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>

#include "runtime/network/network_config.h"

namespace sluice::runtime::network {

/// A monotonic millisecond clock (Flink's `Clock.relativeTimeMillis`); injectable so tests are exact.
class RelativeClock {
 public:
  virtual ~RelativeClock() = default;
  /// Milliseconds since an arbitrary, fixed origin; never decreases.
  virtual int64_t relativeTimeMillis() const = 0;
};

/// The steady clock.
class SystemRelativeClock : public RelativeClock {
 public:
  int64_t relativeTimeMillis() const override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
};

/// A clock moved by hand (tests; Flink's `ManualClock`).
class ManualRelativeClock : public RelativeClock {
 public:
  int64_t relativeTimeMillis() const override { return now_ms_; }
  /// Moves the clock forward by `ms` milliseconds.
  void advance(int64_t ms) { now_ms_ += ms; }

 private:
  int64_t now_ms_ = 0;
};

/// Bytes a gate consumed per second of non-idle time (Flink's `ThroughputCalculator`). The gate reports
/// received bytes; it pauses the measurement when it finds no data and resumes when data comes, so idle
/// time (and time blocked with nothing to read) does not count.
class ThroughputCalculator {
 public:
  /// `clock` must outlive the calculator. The measurement starts paused; the first data starts it.
  explicit ThroughputCalculator(const RelativeClock& clock) : clock_(clock) {}

  /// Adds `bytes` received; resumes the measurement if it was paused.
  void incomingDataSize(int64_t bytes);
  /// Stops counting time (the gate found no data); the time so far is kept.
  void pauseMeasurement();
  /// Starts counting time again if paused.
  void resumeMeasurement();
  /// Throughput since the last call in bytes/s, then resets the counters. When no time was measured,
  /// returns the previous throughput (0 before any).
  int64_t calculateThroughput();
  /// `bytes` over `time_ms` in bytes/s (truncated); the previous throughput when `time_ms` is 0.
  /// Throws InternalError on negative arguments.
  int64_t calculateThroughput(int64_t bytes, int64_t time_ms);

 private:
  static constexpr int64_t kNotTracked = -1;
  const RelativeClock& clock_;
  int64_t accumulated_bytes_ = 0;
  int64_t measured_ms_ = 0;
  int64_t start_ms_ = kNotTracked;
  int64_t current_throughput_ = 0;
};

/// Exponential moving average of the buffer size (Flink's `BufferSizeEMA`):
/// alpha = 2 / (samples + 1); instant = min(total / buffers, 2 × last); last += alpha × (instant − last),
/// clamped to [min, max]; the result is round(last).
class BufferSizeEMA {
 public:
  BufferSizeEMA(int32_t starting_size, int32_t max_size, int32_t min_size, int64_t samples);
  /// The new size in bytes for `total_bytes` of desired in-flight data over `buffers` (> 0) buffers.
  /// Throws InternalError on negative bytes or buffers < 1.
  int32_t calculateBufferSize(int64_t total_bytes, int32_t buffers);
  double alpha() const { return alpha_; }

 private:
  int32_t max_size_;
  int32_t min_size_;
  double alpha_;
  double last_;
};

/// Decides the buffer size of one input gate (Flink's `BufferDebloater`), called every debloat period.
class BufferDebloater {
 public:
  /// Uses target, sizes, samples, threshold and stable_periods of `config`; starts at the starting size.
  explicit BufferDebloater(const BufferDebloatConfiguration& config);

  /// The new size (bytes) to announce upstream, or nothing when the change is skipped.
  /// `throughput` is bytes/s; `buffers_in_use` the buffers the gate holds (0 is treated as 1).
  std::optional<int32_t> recalculateBufferSize(int64_t throughput, int32_t buffers_in_use);
  /// The last announced size in bytes (the `debloatedBufferSize` metric).
  int32_t lastBufferSize() const { return last_buffer_size_; }
  /// newSize × buffers × 1000 / max(1, throughput) of the last calculation, ms (the
  /// `estimatedTimeToConsumeBuffersMs` metric).
  int64_t lastEstimatedTimeToConsumeBuffersMs() const { return last_estimated_ms_; }

 private:
  /// Flink's `skipUpdate`: equal → skip; at or beyond a bound → announce; else skip below the threshold.
  bool flinkSkipUpdate(int32_t new_size) const;
  /// Mean of the last `stable_periods_` smoothed sizes, rounded (see the file comment).
  int32_t stableSize() const;

  int64_t target_ms_;
  int32_t max_size_;
  int32_t min_size_;
  double threshold_factor_;
  int32_t stable_periods_;
  BufferSizeEMA ema_;
  int32_t last_buffer_size_;
  int64_t last_estimated_ms_ = 0;
  std::deque<int32_t> recent_sizes_;  // the last stable_periods_ smoothed sizes, newest at the back
};

}  // namespace sluice::runtime::network
