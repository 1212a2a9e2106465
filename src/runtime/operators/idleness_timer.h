#pragma once
/// Idleness of an input whose watermarks an operator generates (Flink's WatermarksWithIdleness.IdlenessTimer):
/// used by the SQL WatermarkAssigner (`table.exec.source.idle-timeout`) and by WatermarkStrategy::withIdleness
/// of DataStream sources and assignTimestampsAndWatermarks. Task thread only.

#include <algorithm>
#include <cstdint>

namespace sluice::runtime {

/// Counts activity (records) and, checked with the processing time, says when there was none for the
/// timeout. A check that sees new activity restarts the timeout from the time of that check.
class IdlenessTimer {
 public:
  /// `timeout_ms` <= 0 disables idleness (Flink's default).
  explicit IdlenessTimer(int64_t timeout_ms = 0) : timeout_ms_(timeout_ms) {}

  bool enabled() const { return timeout_ms_ > 0; }
  int64_t timeoutMs() const { return timeout_ms_; }
  /// Starts the timeout at `now_ms` (ms, processing time), e.g. when the operator opens.
  void start(int64_t now_ms) {
    last_active_ms_ = now_ms;
    seen_ = activity_;
  }
  /// Records arrived.
  void activity() { ++activity_; }
  /// True when enabled and no activity was seen since `timeout_ms` before `now_ms` (ms).
  bool checkIfIdle(int64_t now_ms) {
    if (!enabled()) return false;
    if (activity_ != seen_) {
      seen_ = activity_;
      last_active_ms_ = now_ms;
      return false;
    }
    return last_active_ms_ + timeout_ms_ <= now_ms;
  }
  /// How often an operator without a per-record hook checks (ms, >= 1): as Flink's WatermarkAssigner
  /// combines its idle timeout with the default `pipeline.auto-watermark-interval` (200 ms): the smaller
  /// of the two when they are 5x apart, else a fifth of the smaller.
  static int64_t checkIntervalMs(int64_t timeout_ms) {
    constexpr int64_t kAutoWatermarkIntervalMs = 200;
    const int64_t smaller = std::min(kAutoWatermarkIntervalMs, timeout_ms);
    const int64_t larger = std::max(kAutoWatermarkIntervalMs, timeout_ms);
    const int64_t interval = smaller * 5 < larger ? smaller : smaller / 5;
    return std::max<int64_t>(interval, 1);
  }

 private:
  int64_t timeout_ms_;
  int64_t activity_ = 0;
  int64_t seen_ = 0;
  int64_t last_active_ms_ = 0;
};

}  // namespace sluice::runtime
