#pragma once
/// Per-split watermarks inside a source (Flink's SourceOperator with ReaderOutput.createOutputForSplit /
/// releaseOutputForSplit, FLIP-27, and the watermark push-down of SupportsWatermarkPushDown): each split
/// keeps its own watermark and the source emits the minimum over the splits it currently owns, so a
/// reader that interleaves several partitions does not turn one partition's progress into another's
/// late rows. Threading: one task thread.

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "runtime/stream_element.h"

namespace sluice::types {
class RowBatch;
}

namespace sluice::runtime {

/// Computes a batch's watermark candidate: the maximum over its rows of the table's watermark
/// expression (e.g. `rowtime - INTERVAL '5' SECOND`), in ms. Implemented by the table layer; shared by
/// the subtasks of a source, so evaluate() must be thread-safe (const, no shared mutable state).
class BatchWatermarkGenerator {
 public:
  virtual ~BatchWatermarkGenerator() = default;
  /// The largest non-NULL watermark value of `batch`'s rows, nullopt when there is none. Throws
  /// UserError on a NULL row time (as the WatermarkAssigner does).
  virtual std::optional<int64_t> evaluate(const types::RowBatch& batch) const = 0;
};

/// The watermark bookkeeping of one source subtask over its splits.
///  - a split added and not yet read holds the combined watermark at Long.MIN (Watermark::kMinTimestamp);
///  - a split's watermark only moves forward (a batch with smaller values changes nothing);
///  - a released (finished) split no longer holds the combination back;
///  - with `idle_timeout_ms` > 0, a split without records for that long (processing time) is idle and
///    does not hold it back either until it produces again (Flink's split idleness,
///    `table.exec.source.idle-timeout`);
///  - nextWatermark() returns the minimum over the active splits when it exceeds the last one returned
///    and is > 0 (the WatermarkAssigner's rule: its watermark starts at 0), so the output never goes back;
///    when every split is idle, nothing holds the watermark back and the maximum over the splits counts
///    (Flink's CombinedWatermarkStatus since FLINK-38454), and allIdle() says the subtask is IDLE.
class SplitWatermarks {
 public:
  explicit SplitWatermarks(int64_t idle_timeout_ms = 0) : idle_timeout_ms_(idle_timeout_ms) {}

  /// A split is now owned (no-op when already known). `now_ms`: processing time, ms.
  void addSplit(const std::string& split_id, int64_t now_ms) {
    splits_.try_emplace(split_id, Split{Watermark::kMinTimestamp, now_ms});
  }
  /// A batch of `split_id` (added implicitly when unknown) whose watermark candidate is `candidate`
  /// (nullopt: no non-NULL value, the split is active but its watermark stays).
  void onBatch(const std::string& split_id, std::optional<int64_t> candidate, int64_t now_ms) {
    Split& s = splits_.try_emplace(split_id, Split{Watermark::kMinTimestamp, now_ms}).first->second;
    s.last_record_ms = now_ms;
    if (candidate) s.watermark = std::max(s.watermark, *candidate);
  }
  /// The split finished: it no longer holds the watermark back.
  void releaseSplit(const std::string& split_id) { splits_.erase(split_id); }
  void releaseAll() { splits_.clear(); }

  /// The watermark to emit now, if it advanced (see the class comment).
  std::optional<int64_t> nextWatermark(int64_t now_ms) {
    std::optional<int64_t> min;
    int64_t max = Watermark::kMinTimestamp;
    for (const auto& [id, s] : splits_) {
      max = std::max(max, s.watermark);
      if (isIdle(s, now_ms)) continue;
      min = min ? std::min(*min, s.watermark) : s.watermark;
    }
    if (!min && !splits_.empty()) min = max;  // every split is idle
    if (!min || *min <= last_emitted_) return std::nullopt;
    last_emitted_ = *min;
    return min;
  }
  /// True when there is a split and every split is idle at `now_ms` (never with idle_timeout_ms 0).
  bool allIdle(int64_t now_ms) const {
    if (splits_.empty()) return false;
    for (const auto& [id, s] : splits_) {
      if (!isIdle(s, now_ms)) return false;
    }
    return true;
  }
  /// The last watermark returned by nextWatermark (0 before any).
  int64_t lastEmitted() const { return last_emitted_; }
  size_t numSplits() const { return splits_.size(); }

 private:
  struct Split {
    int64_t watermark;
    int64_t last_record_ms;
  };
  bool isIdle(const Split& s, int64_t now_ms) const {
    return idle_timeout_ms_ > 0 && now_ms - s.last_record_ms >= idle_timeout_ms_;
  }
  int64_t idle_timeout_ms_;
  int64_t last_emitted_ = 0;
  std::map<std::string, Split> splits_;
};

}  // namespace sluice::runtime
