#pragma once
/// A source subtask's backlog status, the OR of its strategies (FLIP-328: "combined using a logical OR"):
///  - FLIP-309: the split enumerator's setIsProcessingBacklog, delivered to the reader;
///  - FLIP-328: `pipeline.backlog.watermark-lag-threshold`: backlog while the watermark lag (processing
///    time minus the watermark just emitted, FLIP-33's watermarkLag) exceeds the threshold. The lag is
///    undefined before the first watermark. As in Flink, the lag never switches a source from not-backlog
///    to backlog: once the lag has fallen to the threshold it decides nothing any more.
/// The owner emits RecordAttributes when a call returns a change. Once the threshold is set, the first
/// watermark always yields a status (backlog or not), so a consumer's RecordAttributesCombiner hears from
/// every channel and can leave backlog. Records that go out before the first watermark are backlog when
/// the watermark they yield lags (beforeFirstRecords), so a source that starts in backlog is sorted from
/// its first record. A source whose input ended (or whose final watermark came) processes no backlog
/// any more (endOfInput): its gauge drops to 0 and the coordinator stops holding checkpoints back for it.
/// Threading: the task thread only.

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "common/config.h"
#include "runtime/checkpoint/checkpoint_responder.h"
#include "runtime/stream_element.h"
#include "runtime/time/processing_time_service.h"

namespace sluice::runtime {

class SourceBacklogStatus {
 public:
  /// `lag_threshold_ms`: nullopt = the lag decides nothing.
  explicit SourceBacklogStatus(std::optional<int64_t> lag_threshold_ms = std::nullopt)
      : lag_threshold_ms_(lag_threshold_ms) {}
  /// From `pipeline.backlog.watermark-lag-threshold` (ConfigError naming the key for a value below 1 ms).
  static SourceBacklogStatus fromConfiguration(const Configuration& config) {
    return SourceBacklogStatus(config.getOptional(options::kBacklogWatermarkLagThreshold));
  }

  bool lagEnabled() const { return lag_threshold_ms_.has_value(); }
  /// Reports every change to `listener` (the checkpoint coordinator, so no checkpoint starts while the
  /// job sorts a backlog: FLIP-309) as `key`, before the change is returned. Null: reports nothing.
  void reportTo(checkpoint::BacklogStatusListener* listener, std::string key) {
    listener_ = listener;
    key_ = std::move(key);
  }
  /// Operators: fromConfiguration, reporting to the task's coordinator as "<uid>#<subtask>" and showing
  /// the status in the operator's `OperatorMetrics::backlog` gauge.
  template <typename Context>
  static SourceBacklogStatus forOperator(const Context& ctx) {
    SourceBacklogStatus s = fromConfiguration(*ctx.config);
    if (ctx.metrics != nullptr) s.gauge_ = &ctx.metrics->backlog;
    if (s.lagEnabled()) s.reportTo(ctx.backlog_listener, ctx.uid + "#" + std::to_string(ctx.subtask_index));
    return s;
  }

  /// The enumerator's status changed (FLIP-309). Returns the attributes to emit when the status changed.
  std::optional<RecordAttributes> setProcessingBacklog(bool backlog) {
    enumerator_backlog_ = backlog;
    return publish();
  }
  /// The source emitted watermark `watermark` at processing time `now_ms`. Returns the attributes to emit
  /// when the status changed (or was first defined).
  std::optional<RecordAttributes> onWatermark(int64_t watermark, int64_t now_ms) {
    if (!lag_threshold_ms_ || lag_done_) return std::nullopt;
    lag_seen_ = true;
    const bool behind = now_ms - watermark > *lag_threshold_ms_;
    if (!behind) lag_done_ = true;
    lag_backlog_ = behind;
    return publish();
  }
  /// onWatermark at the current time of `timers` (the task's processing time, wall clock ms).
  std::optional<RecordAttributes> onWatermark(int64_t watermark, const ProcessingTimeService* timers) {
    if (!lag_threshold_ms_ || lag_done_ || timers == nullptr) return std::nullopt;
    return onWatermark(watermark, timers->currentProcessingTime());
  }
  /// Records are about to go out whose watermark will be `candidate` (or not below it) at processing time
  /// `now_ms`. Before the first watermark only (the lag is undefined until then): when the candidate lags
  /// by more than the threshold the records are backlog, and the attributes to emit before them are
  /// returned; otherwise the first watermark decides as usual.
  std::optional<RecordAttributes> beforeFirstRecords(int64_t candidate, int64_t now_ms) {
    if (!lag_threshold_ms_ || lag_done_ || lag_seen_ || now_ms - candidate <= *lag_threshold_ms_) return std::nullopt;
    lag_backlog_ = true;
    return publish();
  }
  /// beforeFirstRecords at the current time of `timers`.
  std::optional<RecordAttributes> beforeFirstRecords(int64_t candidate, const ProcessingTimeService* timers) {
    if (!lag_threshold_ms_ || lag_done_ || lag_seen_ || timers == nullptr) return std::nullopt;
    return beforeFirstRecords(candidate, timers->currentProcessingTime());
  }
  /// The input ended, or its final watermark (Long.MAX_VALUE, lag below any threshold) came: nothing more
  /// is backlog. Returns RecordAttributes(not backlog) when the last status emitted was backlog.
  std::optional<RecordAttributes> endOfInput() {
    enumerator_backlog_ = false;
    lag_backlog_ = false;
    lag_done_ = true;
    if (emitted_ != true) return std::nullopt;
    return publish();
  }
  /// The last status emitted (nullopt: none yet).
  std::optional<bool> emitted() const { return emitted_; }

 private:
  std::optional<RecordAttributes> publish() {
    const bool backlog = enumerator_backlog_ || lag_backlog_;
    if (emitted_ == backlog) return std::nullopt;
    emitted_ = backlog;
    if (gauge_ != nullptr) gauge_->store(backlog ? 1 : 0, std::memory_order_relaxed);
    if (listener_ != nullptr) listener_->setIsProcessingBacklog(key_, backlog);
    return RecordAttributes{backlog};
  }

  std::optional<int64_t> lag_threshold_ms_;
  bool enumerator_backlog_ = false;
  bool lag_backlog_ = false;
  bool lag_done_ = false;
  bool lag_seen_ = false;  ///< a watermark came: the lag is defined
  std::optional<bool> emitted_;
  checkpoint::BacklogStatusListener* listener_ = nullptr;
  std::string key_;
  std::atomic<int64_t>* gauge_ = nullptr;  ///< the operator's backlog gauge (read by progress reporting)
};

}  // namespace sluice::runtime
