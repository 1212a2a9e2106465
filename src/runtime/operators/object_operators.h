#pragma once
/// Stateless DataStream operators over ObjectBatches (Flink's StreamMap, StreamFlatMap, StreamFilter,
/// ProcessOperator, TimestampsAndWatermarksOperator) and the shared base that runs a user function's
/// lifecycle. One input batch in, at most one output batch (plus side-output batches) out.
/// Threading: task thread only.

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "runtime/object_batch.h"
#include "runtime/operators/execution_scope.h"
#include "runtime/operators/functions.h"
#include "runtime/operators/source_backlog_status.h"
#include "runtime/operators/idleness_timer.h"
#include "runtime/operators/stream_operator.h"
#include "runtime/time/processing_time_service.h"

namespace sluice::runtime {

/// Flink's MapFunction (for classes; lambdas work directly).
template <typename I, typename O>
class MapFunction : public RichFunction {
 public:
  using InputType = I;
  using OutputType = O;
  virtual O map(const I& value) = 0;
};

/// Flink's FlatMapFunction.
template <typename I, typename O>
class FlatMapFunction : public RichFunction {
 public:
  using InputType = I;
  using OutputType = O;
  virtual void flatMap(const I& value, Collector<O>& out) = 0;
};

/// Flink's FilterFunction.
template <typename T>
class FilterFunction : public RichFunction {
 public:
  virtual bool filter(const T& value) = 0;
};

/// Flink's ReduceFunction: combines two values of the same key into one.
template <typename T>
class ReduceFunction : public RichFunction {
 public:
  virtual T reduce(const T& a, const T& b) = 0;
};

/// Calls a map function given as a callable or as a MapFunction.
template <typename F, typename I>
decltype(auto) invokeMap(F& f, const I& v) {
  if constexpr (std::is_invocable_v<F&, const I&>) return f(v);
  else return f.map(v);
}
template <typename F, typename I, typename O>
void invokeFlatMap(F& f, const I& v, Collector<O>& out) {
  if constexpr (std::is_invocable_v<F&, const I&, Collector<O>&>) f(v, out);
  else f.flatMap(v, out);
}
template <typename F, typename T>
bool invokeFilter(F& f, const T& v) {
  if constexpr (std::is_invocable_v<F&, const T&>) return static_cast<bool>(f(v));
  else return f.filter(v);
}
template <typename F, typename T>
T invokeReduce(F& f, const T& a, const T& b) {
  if constexpr (std::is_invocable_v<F&, const T&, const T&>) return f(a, b);
  else return f.reduce(a, b);
}

/// Base of every DataStream operator: rejects SQL rows, runs a RichFunction's open/close with a
/// RuntimeContext, merges accumulators into the execution scope, and flushes side outputs.
class ObjectOperator : public StreamOperator {
 public:
  explicit ObjectOperator(std::shared_ptr<ExecutionScopeSlot> scope_slot = nullptr)
      : scope_slot_(std::move(scope_slot)) {}
  void processBatch(types::RowBatch&&) override {
    SLUICE_CHECK(false, "DataStream operator '{}' got SQL rows", ctx_.operator_name);
  }
  void open(const OperatorContext& ctx, Output* output) override {
    StreamOperator::open(ctx, output);
    if (scope_slot_) scope_ = scope_slot_->current();
    runtime_context_.init(ctx.subtask_index, ctx.parallelism, ctx.max_parallelism, ctx.task_name,
                          keyedStateBackend());
  }
  void close() override {
    if (scope_) runtime_context_.publishAccumulators(&scope_->accumulators());
  }

 protected:
  /// Keyed operators return their keyed state backend (enables the RuntimeContext's keyed state); it
  /// must exist when ObjectOperator::open runs.
  virtual state::KeyedStateBackend* keyedStateBackend() { return nullptr; }
  /// Opens `fn` when it is a RichFunction.
  template <typename F>
  void openFunction(F& fn) {
    if constexpr (std::is_base_of_v<RichFunction, F>) {
      fn.setRuntimeContext(&runtime_context_);
      fn.open();
    }
  }
  template <typename F>
  void closeFunction(F& fn) {
    if constexpr (std::is_base_of_v<RichFunction, F>) fn.close();
  }
  /// Sends `batch` downstream unless empty.
  void emit(ObjectBatchPtr&& batch) {
    if (batch && !batch->empty()) output_->collectObjects(std::move(batch));
  }
  void flushSideOutputs() {
    side_outputs_.flush([this](ObjectBatchPtr b) { output_->collectObjects(std::move(b)); });
  }
  int64_t processingTime() const {
    return ctx_.processing_time_service ? ctx_.processing_time_service->currentProcessingTime() : 0;
  }

  RuntimeContext runtime_context_;
  SideOutputBuffer side_outputs_;
  std::shared_ptr<ExecutionScopeSlot> scope_slot_;
  std::shared_ptr<ExecutionScope> scope_;
};

/// A Collector appending to a batch, stamping every record with the current timestamp.
template <typename O>
class BatchCollector final : public Collector<O> {
 public:
  void collect(O value) override { batch_->add(std::move(value), timestamp_); }
  void setTimestamp(int64_t ts) { timestamp_ = ts; }
  /// Starts a new output batch; returns the previous one.
  std::unique_ptr<TypedObjectBatch<O>> take() {
    auto b = std::move(batch_);
    batch_ = makeObjectBatch<O>();
    return b;
  }

 private:
  std::unique_ptr<TypedObjectBatch<O>> batch_ = makeObjectBatch<O>();
  int64_t timestamp_ = kNoTimestamp;
};

/// map: one output per record, same timestamp (Flink's StreamMap).
template <typename I, typename O, typename F>
class MapOperator final : public ObjectOperator {
 public:
  MapOperator(F fn, std::shared_ptr<ExecutionScopeSlot> slot) : ObjectOperator(std::move(slot)), fn_(std::move(fn)) {}
  void open(const OperatorContext& ctx, Output* output) override {
    ObjectOperator::open(ctx, output);
    openFunction(fn_);
  }
  void processObjects(ObjectBatchPtr&& batch) override {
    const auto& in = batch->as<I>();
    auto out = makeObjectBatch<O>();
    out->reserve(in.size());
    for (size_t i = 0; i < in.size(); ++i) out->add(invokeMap(fn_, in.value(i)), in.timestamp(i));
    emit(std::move(out));
  }
  void close() override {
    closeFunction(fn_);
    ObjectOperator::close();
  }

 private:
  F fn_;
};

/// flatMap: any number of outputs per record (Flink's StreamFlatMap).
template <typename I, typename O, typename F>
class FlatMapOperator final : public ObjectOperator {
 public:
  FlatMapOperator(F fn, std::shared_ptr<ExecutionScopeSlot> slot)
      : ObjectOperator(std::move(slot)), fn_(std::move(fn)) {}
  void open(const OperatorContext& ctx, Output* output) override {
    ObjectOperator::open(ctx, output);
    openFunction(fn_);
  }
  void processObjects(ObjectBatchPtr&& batch) override {
    const auto& in = batch->as<I>();
    for (size_t i = 0; i < in.size(); ++i) {
      out_.setTimestamp(in.timestamp(i));
      invokeFlatMap(fn_, in.value(i), static_cast<Collector<O>&>(out_));
    }
    emit(out_.take());
  }
  void close() override {
    closeFunction(fn_);
    ObjectOperator::close();
  }

 private:
  F fn_;
  BatchCollector<O> out_;
};

/// filter: keeps the records the predicate accepts (Flink's StreamFilter).
template <typename T, typename F>
class FilterOperator final : public ObjectOperator {
 public:
  FilterOperator(F fn, std::shared_ptr<ExecutionScopeSlot> slot) : ObjectOperator(std::move(slot)), fn_(std::move(fn)) {}
  void open(const OperatorContext& ctx, Output* output) override {
    ObjectOperator::open(ctx, output);
    openFunction(fn_);
  }
  void processObjects(ObjectBatchPtr&& batch) override {
    const auto& in = batch->as<T>();
    rows_.clear();
    for (size_t i = 0; i < in.size(); ++i) {
      if (invokeFilter(fn_, in.value(i))) rows_.push_back(static_cast<uint32_t>(i));
    }
    if (rows_.size() == in.size()) {  // everything passes: forward the batch as it is
      emit(std::move(batch));
      return;
    }
    if (rows_.empty()) return;
    ObjectBatchPtr out = batch->emptyLike();
    out->appendRows(*batch, rows_.data(), rows_.size());
    emit(std::move(out));
  }
  void close() override {
    closeFunction(fn_);
    ObjectOperator::close();
  }

 private:
  F fn_;
  std::vector<uint32_t> rows_;
};

/// The timer service of a non-keyed stream: time only; timers throw (Flink: "Setting timers is only
/// supported on a keyed streams.").
class NonKeyedTimerService final : public TimerService {
 public:
  NonKeyedTimerService(const int64_t* watermark, const ProcessingTimeService* clock)
      : watermark_(watermark), clock_(clock) {}
  int64_t currentProcessingTime() const override { return clock_ ? clock_->currentProcessingTime() : 0; }
  int64_t currentWatermark() const override { return *watermark_; }
  void registerEventTimeTimer(int64_t) override { fail(); }
  void registerProcessingTimeTimer(int64_t) override { fail(); }
  void deleteEventTimeTimer(int64_t) override { fail(); }
  void deleteProcessingTimeTimer(int64_t) override { fail(); }

 private:
  [[noreturn]] static void fail() {
    throw UserError("Setting timers is only supported on a keyed stream: use keyBy(...).process(...)");
  }
  const int64_t* watermark_;
  const ProcessingTimeService* clock_;
};

/// process on a non-keyed stream (Flink's ProcessOperator).
template <typename F>
class ProcessOperator final : public ObjectOperator {
 public:
  using I = typename F::InputType;
  using O = typename F::OutputType;
  ProcessOperator(F fn, std::shared_ptr<ExecutionScopeSlot> slot)
      : ObjectOperator(std::move(slot)), fn_(std::move(fn)) {}
  void open(const OperatorContext& ctx, Output* output) override {
    ObjectOperator::open(ctx, output);
    timers_ = std::make_unique<NonKeyedTimerService>(&watermark_, ctx.processing_time_service);
    context_.bind(timers_.get(), &side_outputs_);
    openFunction(fn_);
  }
  void processObjects(ObjectBatchPtr&& batch) override {
    const auto& in = batch->as<I>();
    for (size_t i = 0; i < in.size(); ++i) {
      context_.setTimestamp(in.timestamp(i));
      out_.setTimestamp(in.timestamp(i));
      fn_.processElement(in.value(i), context_, out_);
    }
    emit(out_.take());
    flushSideOutputs();
  }
  void processWatermark(Watermark mark) override {
    watermark_ = mark.timestamp;
    output_->emitWatermark(mark);
  }
  void close() override {
    closeFunction(fn_);
    ObjectOperator::close();
  }

 private:
  F fn_;
  BatchCollector<O> out_;
  ProcessContextBase context_;
  int64_t watermark_ = Watermark::kMinTimestamp;
  std::unique_ptr<NonKeyedTimerService> timers_;
};

/// How event timestamps and watermarks are generated (Flink's WatermarkStrategy): a timestamp assigner
/// and bounded out-of-orderness (0 = monotonous timestamps), or no watermarks at all.
template <typename T>
struct WatermarkStrategy {
  using TimestampAssigner = std::function<int64_t(const T&, int64_t record_timestamp)>;

  /// Watermarks trail the largest timestamp seen by `max_out_of_orderness_ms`: maxTs - bound - 1
  /// (Flink's BoundedOutOfOrdernessWatermarks).
  static WatermarkStrategy forBoundedOutOfOrderness(int64_t max_out_of_orderness_ms) {
    WatermarkStrategy s;
    s.generate = true;
    s.out_of_orderness_ms = max_out_of_orderness_ms;
    return s;
  }
  template <typename Rep, typename Period>
  static WatermarkStrategy forBoundedOutOfOrderness(std::chrono::duration<Rep, Period> bound) {
    return forBoundedOutOfOrderness(std::chrono::duration_cast<std::chrono::milliseconds>(bound).count());
  }
  /// Ascending timestamps: the watermark is maxTs - 1 (Flink's AscendingTimestampsWatermarks).
  static WatermarkStrategy forMonotonousTimestamps() { return forBoundedOutOfOrderness(int64_t{0}); }
  /// No watermarks (only the final one at the end of a bounded input).
  static WatermarkStrategy noWatermarks() { return WatermarkStrategy(); }

  /// After `idle_timeout_ms` (processing time) without records the input is marked idle (WatermarkStatus
  /// IDLE): it no longer holds back event time downstream until records come again (Flink's
  /// WatermarkStrategy#withIdleness). A source checks on every poll, assignTimestampsAndWatermarks every
  /// IdlenessTimer::checkIntervalMs(timeout). 0 (the default) disables it.
  WatermarkStrategy withIdleness(int64_t idle_timeout_ms) const {
    WatermarkStrategy s = *this;
    s.idle_timeout_ms = idle_timeout_ms;
    return s;
  }
  template <typename Rep, typename Period>
  WatermarkStrategy withIdleness(std::chrono::duration<Rep, Period> timeout) const {
    return withIdleness(std::chrono::duration_cast<std::chrono::milliseconds>(timeout).count());
  }

  /// Takes timestamps from `fn`: `int64_t(const T&)` or `int64_t(const T&, int64_t record_timestamp)`.
  template <typename Fn>
  WatermarkStrategy withTimestampAssigner(Fn fn) const {
    WatermarkStrategy s = *this;
    if constexpr (std::is_invocable_v<Fn&, const T&, int64_t>) {
      s.assigner = [fn](const T& v, int64_t ts) mutable { return static_cast<int64_t>(fn(v, ts)); };
    } else {
      s.assigner = [fn](const T& v, int64_t) mutable { return static_cast<int64_t>(fn(v)); };
    }
    return s;
  }

  TimestampAssigner assigner;       ///< null: keep the records' timestamps
  bool generate = false;            ///< false: no watermarks
  int64_t out_of_orderness_ms = 0;
  int64_t idle_timeout_ms = 0;  ///< withIdleness; 0: never idle
};

/// Generates watermarks for a WatermarkStrategy as records pass (Flink's WatermarkGenerator). The
/// watermark is offered after every batch rather than every pipeline.auto-watermark-interval, which is
/// more frequent and never later. Task thread only.
template <typename T>
class WatermarkGeneratorState {
 public:
  explicit WatermarkGeneratorState(const WatermarkStrategy<T>& s) : strategy_(s) {}
  /// Stamps the records of `batch` (assigner) and tracks the largest timestamp.
  void onBatch(TypedObjectBatch<T>& batch) {
    auto& ts = batch.timestamps();
    for (size_t i = 0; i < batch.size(); ++i) {
      if (strategy_.assigner) ts[i] = strategy_.assigner(batch.value(i), ts[i]);
      if (ts[i] != kNoTimestamp && ts[i] > max_timestamp_) max_timestamp_ = ts[i];
    }
  }
  /// The watermark to emit now, if it advanced.
  std::optional<int64_t> nextWatermark() {
    if (!strategy_.generate || max_timestamp_ == kNoTimestamp) return std::nullopt;
    const int64_t wm = max_timestamp_ - strategy_.out_of_orderness_ms - 1;
    if (wm <= last_) return std::nullopt;
    last_ = wm;
    return wm;
  }

 private:
  WatermarkStrategy<T> strategy_;
  int64_t max_timestamp_ = kNoTimestamp;
  int64_t last_ = Watermark::kMinTimestamp;
};

/// The WatermarkStatus an operator that generates watermarks announces: IDLE once, ACTIVE again once.
class WatermarkStatusOutput {
 public:
  void markIdle(Output* out) {
    if (idle_) return;
    idle_ = true;
    out->emitWatermarkStatus(WatermarkStatus::kIdle);
  }
  void markActive(Output* out) {
    if (!idle_) return;
    idle_ = false;
    out->emitWatermarkStatus(WatermarkStatus::kActive);
  }

 private:
  bool idle_ = false;
};

/// assignTimestampsAndWatermarks (Flink's TimestampsAndWatermarksOperator): stamps records and emits
/// watermarks; upstream watermarks are swallowed except the final Long.MAX_VALUE one, and upstream
/// watermark statuses are swallowed too (this operator decides its own, see withIdleness: IDLE after the
/// timeout without records, checked by a processing-time timer; ACTIVE before the next records or the
/// final watermark). In BATCH runtime mode no intermediate watermarks are emitted (Flink processes batch
/// jobs with a perfect watermark), and no status.
template <typename T>
class TimestampsAndWatermarksOperator final : public ObjectOperator {
 public:
  TimestampsAndWatermarksOperator(WatermarkStrategy<T> strategy, bool batch_mode)
      : generator_(strategy), idleness_(batch_mode ? 0 : strategy.idle_timeout_ms), batch_mode_(batch_mode) {}
  void open(const OperatorContext& ctx, Output* output) override {
    ObjectOperator::open(ctx, output);
    if (ctx.config != nullptr && !batch_mode_) backlog_ = SourceBacklogStatus::forOperator(ctx);
    if (!idleness_.enabled()) return;
    SLUICE_CHECK(ctx.processing_time_service != nullptr, "'{}': withIdleness needs processing-time timers",
                 ctx.operator_name);
    const int64_t now = ctx.processing_time_service->currentProcessingTime();
    idleness_.start(now);
    scheduleIdleCheck(now);
  }
  void processObjects(ObjectBatchPtr&& batch) override {
    if (!batch->empty()) {
      idleness_.activity();
      status_.markActive(output_);
    }
    generator_.onBatch(batch->as<T>());
    const std::optional<int64_t> wm = batch_mode_ ? std::nullopt : generator_.nextWatermark();
    if (wm) {
      // Records before the first watermark are backlog when that watermark lags (FLIP-328).
      if (auto a = backlog_.beforeFirstRecords(*wm, ctx_.processing_time_service)) output_->emitRecordAttributes(*a);
    }
    emit(std::move(batch));
    if (wm) {
      output_->emitWatermark(Watermark{*wm});
      if (auto a = backlog_.onWatermark(*wm, ctx_.processing_time_service)) output_->emitRecordAttributes(*a);
    }
  }
  void processWatermark(Watermark mark) override {
    if (mark.timestamp != Watermark::kMaxTimestamp) return;
    status_.markActive(output_);
    output_->emitWatermark(mark);
    endBacklog();
  }
  void endInput() override { endBacklog(); }
  void processWatermarkStatus(WatermarkStatus) override {}
  void close() override {
    closed_ = true;
    ObjectOperator::close();
  }

 private:
  // The final watermark or the end of input: the lag ends (FLIP-328).
  void endBacklog() {
    if (auto a = backlog_.endOfInput()) output_->emitRecordAttributes(*a);
  }
  void scheduleIdleCheck(int64_t now_ms) {
    ProcessingTimeService* timers = ctx_.processing_time_service;
    timers->registerTimer(now_ms + IdlenessTimer::checkIntervalMs(idleness_.timeoutMs()), [this, timers](int64_t) {
      if (closed_) return;
      const int64_t now = timers->currentProcessingTime();
      if (idleness_.checkIfIdle(now)) status_.markIdle(output_);
      scheduleIdleCheck(now);
    });
  }

  WatermarkGeneratorState<T> generator_;
  IdlenessTimer idleness_;
  WatermarkStatusOutput status_;
  SourceBacklogStatus backlog_;  ///< FLIP-328: backlog while the watermark lags by more than the threshold
  bool batch_mode_;
  bool closed_ = false;
};

}  // namespace sluice::runtime
