#pragma once
/// The clock a source measures its splits' idleness on: processing time with the time the task thread
/// spent downstream of the source taken out (Flink's PausableRelativeClock as SourceOperator uses it:
/// FLINK-35886 / FLIP-471 pause it while the task is back pressured, FLINK-40234 while chained operators
/// run). In Sluice a source hands each batch, watermark and status downstream synchronously and a full
/// output blocks inside that call, so pausing around every downstream call covers both: a split whose
/// rows wait behind a blocked emit is not idle, and its rows are not made late by the others' watermark.
/// Task thread only.

#include <cstdint>

namespace sluice::runtime {

class InputActivityClock {
 public:
  /// The activity time (ms) at processing time `now_ms`: `now_ms` minus every pause so far, frozen
  /// during a pause. Never goes back while `now_ms` does not.
  int64_t relative(int64_t now_ms) const { return (depth_ > 0 ? pause_start_ms_ : now_ms) - paused_ms_; }

  /// Stops the clock at `now_ms` (nested pauses count once).
  void pause(int64_t now_ms) {
    if (depth_++ == 0) pause_start_ms_ = now_ms;
  }
  /// Restarts it at `now_ms` once the outermost pause ends.
  void resume(int64_t now_ms) {
    if (--depth_ == 0 && now_ms > pause_start_ms_) paused_ms_ += now_ms - pause_start_ms_;
  }

 private:
  int depth_ = 0;
  int64_t pause_start_ms_ = 0;
  int64_t paused_ms_ = 0;  ///< total length of the finished pauses
};

}  // namespace sluice::runtime
