#pragma once
/// Keyed DataStream operators: keyed state and event- and processing-time timers per key in the
/// operator's keyed state backend (runtime/state: Flink's HeapKeyedStateBackend + InternalTimerService),
/// keyed reduce / sum / min / max (StreamGroupedReduceOperator), KeyedProcessOperator, and the two-input
/// operators of connected streams (CoStreamMap, CoProcessOperator, KeyedCoProcessOperator). Everything a
/// keyed operator must keep across a failure lives in the backend, so snapshotState has nothing to add.
/// Threading: task thread only.

#include <cstring>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "common/hash.h"
#include "runtime/operators/object_operators.h"
#include "runtime/serialization/key_hash.h"
#include "runtime/serialization/type_serializer.h"
#include "runtime/state/keyed_state_backend.h"
#include "runtime/state/stream_operator_state_context.h"
#include "runtime/task/task_cancellation.h"

namespace sluice::runtime {

/// Fires one timer of a keyed (co-)process function: binds the key, domain and timestamp to the
/// timer context, then calls `fn.onTimer`. Flink: an event-time timer's output carries the timer's
/// time; a processing-time timer's output carries none.
template <typename F, typename TimerContext, typename Collector, typename K>
void fireKeyedTimer(F& fn, TimerContext& ctx, Collector& out, const K* key, int64_t time, TimeDomain domain) {
  ctx.setKey(key);
  ctx.setDomain(domain);
  ctx.setTimestamp(domain == TimeDomain::kEventTime ? time : kNoTimestamp);
  out.setTimestamp(ctx.rawTimestamp());
  fn.onTimer(time, ctx, out);
}

/// Base of keyed operators: keyed state and timers in the operator's keyed state backend (runtime/state),
/// the typed current key, the TimerService a function sees, and timer firing on watermarks and on the
/// task's ProcessingTimeService.
///
/// State: `ctx.state` (set by the StreamTask, already restored) or, when null (operators driven by hand),
/// a private StreamOperatorStateContext over all key groups [0, max_parallelism - 1]. The backend's
/// current key is the key's TypeSerializer<K> bytes in key group assignToKeyGroup(keyHash(key),
/// max_parallelism): the group the HASH exchange (KeySelectorPartitioner) routes the record by, so a
/// key's state moves with its records when a job is rescaled. A timer's key is deserialized back into
/// the typed key before onTimer.
///
/// Timers: the backend's InternalTimerService `timer_service` ("user-timers" for process functions,
/// "window-timers" for windows, Flink's names), snapshotted with the keyed state. Processing-time timers
/// are also scheduled on the task's ProcessingTimeService; after a restore the earliest restored one is
/// scheduled in open(), so timers already due fire at the task's next timer round (Flink's
/// InternalTimerServiceImpl.startTimerService). As in Flink (FLINK-14231), processing-time timers still
/// pending when the input ends are not fired; event-time timers all fire on the final watermark.
/// Threading: the task thread only.
template <typename K>
class KeyedOperatorBase : public ObjectOperator, public TimerService {
  static_assert(hasTypeSerializer<K>(),
                "a keyBy key type needs a TypeSerializer (its bytes scope keyed state): declare it with SLUICE_TYPE");

 public:
  /// `timer_service`: the name of the backend's timer service, empty for an operator without timers.
  KeyedOperatorBase(std::shared_ptr<ExecutionScopeSlot> slot, std::string timer_service)
      : ObjectOperator(std::move(slot)), timer_service_name_(std::move(timer_service)) {}

  void open(const OperatorContext& ctx, Output* output) override {
    if (ctx.state != nullptr) {
      state_ = ctx.state;
    } else {
      own_state_ = std::make_unique<state::StreamOperatorStateContext>(
          ctx.uid.empty() ? ctx.operator_name : ctx.uid, state::KeyGroupRange::of(0, ctx.max_parallelism - 1),
          ctx.max_parallelism, nullptr);
      state_ = own_state_.get();
    }
    SLUICE_CHECK(state_->maxParallelism() == ctx.max_parallelism,
                 "operator '{}': state context for max parallelism {}, operator runs with {}", ctx.operator_name,
                 state_->maxParallelism(), ctx.max_parallelism);
    backend_ = &state_->keyedStateBackend();
    if (!timer_service_name_.empty()) timers_ = &backend_->getInternalTimerService(timer_service_name_);
    ObjectOperator::open(ctx, output);
    if (timers_ != nullptr) {
      if (auto next = timers_->nextProcessingTime()) scheduleProcessingTimer(*next);
    }
  }

  int64_t currentProcessingTime() const override { return processingTime(); }
  int64_t currentWatermark() const override { return watermark_; }
  void registerEventTimeTimer(int64_t time) override { timerService().registerEventTimeTimer({}, time); }
  void registerProcessingTimeTimer(int64_t time) override {
    timerService().registerProcessingTimeTimer({}, time);
    scheduleProcessingTimer(time);
  }
  void deleteEventTimeTimer(int64_t time) override { timerService().deleteEventTimeTimer({}, time); }
  void deleteProcessingTimeTimer(int64_t time) override { timerService().deleteProcessingTimeTimer({}, time); }

  /// Fires every event-time timer <= the watermark (timers set while firing included), then forwards it.
  void processWatermark(Watermark mark) override {
    watermark_ = mark.timestamp;
    if (timers_ != nullptr) {
      // Thousands of windows may fire on one watermark: a cancel ends the loop early.
      CancellationCheck<> cancellation;
      timers_->advanceWatermark(mark.timestamp, [this, &cancellation](std::string_view key, int32_t, std::string_view ns,
                                                                      int64_t time) {
        cancellation.tick();
        fireTimer(key, ns, time, TimeDomain::kEventTime);
      });
    }
    afterTimers();
    output_->emitWatermark(mark);
  }

 protected:
  state::KeyedStateBackend* keyedStateBackend() override { return backend_; }
  state::KeyedStateBackend& backend() { return *backend_; }
  state::InternalTimerService& timerService() {
    SLUICE_CHECK(timers_ != nullptr, "operator '{}' has no timer service", this->ctx_.operator_name);
    return *timers_;
  }

  /// Makes `key` the current key of the backend (bytes and key group, see the class comment) and of
  /// currentKey().
  void setCurrentKey(K key) {
    const int32_t group = assignToKeyGroup(keyHash(key), backend_->maxParallelism());
    if constexpr (kRawKey) {
      // The built-in serializer of a number writes its bytes as they are: copy them, no buffer.
      char raw[sizeof(K)];
      std::memcpy(raw, &key, sizeof(K));
      backend_->setCurrentKey(std::string_view(raw, sizeof(K)), group);
    } else {
      key_bytes_.clear();
      DataOutputView out(key_bytes_);
      TypeSerializer<K>::serialize(key, out);
      backend_->setCurrentKey(key_bytes_, group);
    }
    current_key_ = std::move(key);
  }
  /// The typed key of the record or timer being processed.
  const K& currentKey() const { return *current_key_; }

  /// A timer fired for the current key; `ns` is its namespace bytes (empty: VoidNamespace).
  virtual void onTimer(int64_t time, std::string_view ns, TimeDomain domain) = 0;
  /// Called after a round of timers (flush outputs).
  virtual void afterTimers() {}

  /// Schedules a call on the task's ProcessingTimeService at `time` (ms), once per distinct time.
  void scheduleProcessingTimer(int64_t time) {
    if (ctx_.processing_time_service != nullptr && scheduled_.insert(time).second) {
      ctx_.processing_time_service->registerTimer(time, [this](int64_t t) { onProcessingTime(t); });
    }
  }

  int64_t watermark_ = Watermark::kMinTimestamp;

 private:
  /// A key whose TypeSerializer bytes are its memory (numbers and enums with the built-in serializer).
  static constexpr bool kRawKey = (std::is_arithmetic_v<K> || std::is_enum_v<K>) && !std::is_same_v<K, bool> &&
                                  requires { TypeSerializer<K>::kBuiltIn; };

  void fireTimer(std::string_view key, std::string_view ns, int64_t time, TimeDomain domain) {
    if constexpr (kRawKey) {
      SLUICE_CHECK(key.size() == sizeof(K), "timer key of {} bytes for a {}-byte key", key.size(), sizeof(K));
      K k;
      std::memcpy(&k, key.data(), sizeof(K));
      current_key_ = k;
    } else {
      DataInputView in(key);
      current_key_ = TypeSerializer<K>::deserialize(in);
    }
    onTimer(time, ns, domain);
  }
  void onProcessingTime(int64_t time) {
    scheduled_.erase(time);
    bool fired = false;
    timers_->advanceProcessingTime(time, [&](std::string_view key, int32_t, std::string_view ns, int64_t t) {
      fired = true;
      fireTimer(key, ns, t, TimeDomain::kProcessingTime);
    });
    if (fired) afterTimers();
    // Restored timers (and timers registered for times already scheduled once) are not scheduled yet.
    if (auto next = timers_->nextProcessingTime()) scheduleProcessingTimer(*next);
  }

  std::string timer_service_name_;
  std::unique_ptr<state::StreamOperatorStateContext> own_state_;
  state::StreamOperatorStateContext* state_ = nullptr;
  state::KeyedStateBackend* backend_ = nullptr;
  state::InternalTimerService* timers_ = nullptr;
  std::string key_bytes_;
  std::optional<K> current_key_;
  std::set<int64_t> scheduled_;
};

/// Rolling reduce per key (Flink's StreamGroupedReduceOperator): the key's value is the ValueState
/// "_op_state" (Flink's name). In STREAMING every record emits the key's updated value; in BATCH runtime
/// mode only the final value per key is emitted at the end of input (in key-group order).
template <typename K, typename T, typename KS, typename R>
class KeyedReduceOperator final : public KeyedOperatorBase<K> {
 public:
  KeyedReduceOperator(KS key_selector, R reducer, bool batch_mode, std::shared_ptr<ExecutionScopeSlot> slot)
      : KeyedOperatorBase<K>(std::move(slot), ""), key_selector_(std::move(key_selector)),
        reducer_(std::move(reducer)), batch_mode_(batch_mode) {}
  void open(const OperatorContext& ctx, Output* output) override {
    KeyedOperatorBase<K>::open(ctx, output);
    value_ = &this->backend().getValueState(state::ValueStateDescriptor<T, StateSerializer<T>>{"_op_state"});
    this->openFunction(reducer_);
  }
  void processObjects(ObjectBatchPtr&& batch) override {
    const auto& in = batch->template as<T>();
    auto out = makeObjectBatch<T>();
    if (!batch_mode_) out->reserve(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      this->setCurrentKey(key_selector_(in.value(i)));
      bool first = false;
      T& cur = value_->valueOrInsertWith([&] { return in.value(i); }, first);
      if (!first) cur = invokeReduce(reducer_, cur, in.value(i));
      if (!batch_mode_) out->add(cur, in.timestamp(i));
    }
    this->emit(std::move(out));
  }
  void endInput() override {
    if (!batch_mode_) return;
    auto out = makeObjectBatch<T>();
    value_->forEachKey([&](std::string_view, int32_t, std::string_view, T& v) { out->add(v); });
    this->emit(std::move(out));
  }
  void close() override {
    this->closeFunction(reducer_);
    KeyedOperatorBase<K>::close();
  }

 protected:
  void onTimer(int64_t, std::string_view, TimeDomain) override {}

 private:
  KS key_selector_;
  R reducer_;
  bool batch_mode_;
  state::ValueState<T, StateSerializer<T>>* value_ = nullptr;
};

/// keyBy(...).process(KeyedProcessFunction) (Flink's KeyedProcessOperator).
template <typename KS, typename F>
class KeyedProcessOperator final : public KeyedOperatorBase<typename F::KeyType> {
 public:
  using K = typename F::KeyType;
  using I = typename F::InputType;
  using O = typename F::OutputType;
  KeyedProcessOperator(KS key_selector, F fn, std::shared_ptr<ExecutionScopeSlot> slot)
      : KeyedOperatorBase<K>(std::move(slot), "user-timers"), key_selector_(std::move(key_selector)),
        fn_(std::move(fn)) {}
  void open(const OperatorContext& ctx, Output* output) override {
    KeyedOperatorBase<K>::open(ctx, output);
    context_.bind(this, &this->side_outputs_);
    timer_context_.bind(this, &this->side_outputs_);
    this->openFunction(fn_);
  }
  void processObjects(ObjectBatchPtr&& batch) override {
    const auto& in = batch->template as<I>();
    for (size_t i = 0; i < in.size(); ++i) {
      this->setCurrentKey(key_selector_(in.value(i)));
      context_.setKey(&this->currentKey());
      context_.setTimestamp(in.timestamp(i));
      out_.setTimestamp(in.timestamp(i));
      fn_.processElement(in.value(i), context_, out_);
    }
    afterTimers();
  }
  void close() override {
    this->closeFunction(fn_);
    KeyedOperatorBase<K>::close();
  }

 protected:
  void onTimer(int64_t time, std::string_view, TimeDomain domain) override {
    fireKeyedTimer(fn_, timer_context_, out_, &this->currentKey(), time, domain);
  }
  void afterTimers() override {
    this->emit(out_.take());
    this->flushSideOutputs();
  }

 private:
  KS key_selector_;
  F fn_;
  BatchCollector<O> out_;
  typename F::Context context_;
  typename F::OnTimerContext timer_context_;
};

/// connect(...).map(CoMapFunction) (Flink's CoStreamMap): map1 for the first input, map2 for the second.
template <typename I1, typename I2, typename O, typename F>
class CoMapOperator final : public ObjectOperator {
 public:
  CoMapOperator(F fn, std::shared_ptr<ExecutionScopeSlot> slot) : ObjectOperator(std::move(slot)), fn_(std::move(fn)) {}
  void open(const OperatorContext& ctx, Output* output) override {
    ObjectOperator::open(ctx, output);
    openFunction(fn_);
  }
  void processObjects(ObjectBatchPtr&& batch) override {
    const auto& in = batch->as<I1>();
    auto out = makeObjectBatch<O>();
    for (size_t i = 0; i < in.size(); ++i) out->add(fn_.map1(in.value(i)), in.timestamp(i));
    emit(std::move(out));
  }
  void processObjects2(ObjectBatchPtr&& batch) override {
    const auto& in = batch->as<I2>();
    auto out = makeObjectBatch<O>();
    for (size_t i = 0; i < in.size(); ++i) out->add(fn_.map2(in.value(i)), in.timestamp(i));
    emit(std::move(out));
  }
  void close() override {
    closeFunction(fn_);
    ObjectOperator::close();
  }

 private:
  F fn_;
};

/// connect(...).process(CoProcessFunction) (Flink's CoProcessOperator). Timers throw (non-keyed).
template <typename F>
class CoProcessOperator final : public ObjectOperator {
 public:
  using I1 = typename F::Input1Type;
  using I2 = typename F::Input2Type;
  using O = typename F::OutputType;
  CoProcessOperator(F fn, std::shared_ptr<ExecutionScopeSlot> slot)
      : ObjectOperator(std::move(slot)), fn_(std::move(fn)) {}
  void open(const OperatorContext& ctx, Output* output) override {
    ObjectOperator::open(ctx, output);
    timers_ = std::make_unique<NonKeyedTimerService>(&watermark_, ctx.processing_time_service);
    context_.bind(timers_.get(), &side_outputs_);
    openFunction(fn_);
  }
  void processObjects(ObjectBatchPtr&& batch) override { run<I1, 1>(*batch); }
  void processObjects2(ObjectBatchPtr&& batch) override { run<I2, 2>(*batch); }
  void processWatermark(Watermark mark) override {
    watermark_ = mark.timestamp;
    output_->emitWatermark(mark);
  }
  void close() override {
    closeFunction(fn_);
    ObjectOperator::close();
  }

 private:
  template <typename I, int N>
  void run(ObjectBatch& batch) {
    const auto& in = batch.as<I>();
    for (size_t i = 0; i < in.size(); ++i) {
      context_.setTimestamp(in.timestamp(i));
      out_.setTimestamp(in.timestamp(i));
      if constexpr (N == 1) fn_.processElement1(in.value(i), context_, out_);
      else fn_.processElement2(in.value(i), context_, out_);
    }
    emit(out_.take());
    flushSideOutputs();
  }

  F fn_;
  BatchCollector<O> out_;
  ProcessContextBase context_;
  int64_t watermark_ = Watermark::kMinTimestamp;
  std::unique_ptr<NonKeyedTimerService> timers_;
};

/// Keyed connected streams: process(KeyedCoProcessFunction) with state and timers shared by both inputs
/// (Flink's KeyedCoProcessOperator). KS1 / KS2 select the key of each input.
template <typename KS1, typename KS2, typename F>
class KeyedCoProcessOperator final : public KeyedOperatorBase<typename F::KeyType> {
 public:
  using K = typename F::KeyType;
  using I1 = typename F::Input1Type;
  using I2 = typename F::Input2Type;
  using O = typename F::OutputType;
  KeyedCoProcessOperator(KS1 ks1, KS2 ks2, F fn, std::shared_ptr<ExecutionScopeSlot> slot)
      : KeyedOperatorBase<K>(std::move(slot), "user-timers"), ks1_(std::move(ks1)), ks2_(std::move(ks2)),
        fn_(std::move(fn)) {}
  void open(const OperatorContext& ctx, Output* output) override {
    KeyedOperatorBase<K>::open(ctx, output);
    context_.bind(this, &this->side_outputs_);
    timer_context_.bind(this, &this->side_outputs_);
    this->openFunction(fn_);
  }
  void processObjects(ObjectBatchPtr&& batch) override { run<I1, 1>(*batch); }
  void processObjects2(ObjectBatchPtr&& batch) override { run<I2, 2>(*batch); }
  void close() override {
    this->closeFunction(fn_);
    KeyedOperatorBase<K>::close();
  }

 protected:
  void onTimer(int64_t time, std::string_view, TimeDomain domain) override {
    fireKeyedTimer(fn_, timer_context_, out_, &this->currentKey(), time, domain);
  }
  void afterTimers() override {
    this->emit(out_.take());
    this->flushSideOutputs();
  }

 private:
  template <typename I, int N>
  void run(ObjectBatch& batch) {
    const auto& in = batch.as<I>();
    for (size_t i = 0; i < in.size(); ++i) {
      if constexpr (N == 1) this->setCurrentKey(ks1_(in.value(i)));
      else this->setCurrentKey(ks2_(in.value(i)));
      context_.setKey(&this->currentKey());
      context_.setTimestamp(in.timestamp(i));
      out_.setTimestamp(in.timestamp(i));
      if constexpr (N == 1) fn_.processElement1(in.value(i), context_, out_);
      else fn_.processElement2(in.value(i), context_, out_);
    }
    afterTimers();
  }

  KS1 ks1_;
  KS2 ks2_;
  F fn_;
  BatchCollector<O> out_;
  typename F::Context context_;
  typename F::OnTimerContext timer_context_;
};

/// HASH partitioning of DataStream records by a key selector: keyHash(selector(record)).
template <typename T, typename KS>
class KeySelectorPartitioner final : public ObjectPartitioner {
 public:
  explicit KeySelectorPartitioner(KS ks) : ks_(std::move(ks)) {}
  void keyHashes(const ObjectBatch& batch, std::vector<uint64_t>& out) const override {
    const auto& in = batch.as<T>();
    out.resize(in.size());
    for (size_t i = 0; i < in.size(); ++i) out[i] = keyHash(ks_(in.value(i)));
  }

 private:
  KS ks_;
};

/// CUSTOM partitioning (partitionCustom): partitioner(key, numPartitions) picks the channel.
template <typename T, typename KS, typename P>
class CustomPartitioner final : public ObjectPartitioner {
 public:
  CustomPartitioner(KS ks, P p) : ks_(std::move(ks)), p_(std::move(p)) {}
  void keyHashes(const ObjectBatch&, std::vector<uint64_t>&) const override {
    SLUICE_CHECK(false, "custom partitioner used as HASH");
  }
  void selectChannels(const ObjectBatch& batch, int num_channels, std::vector<int>& out) const override {
    const auto& in = batch.as<T>();
    out.resize(in.size());
    for (size_t i = 0; i < in.size(); ++i) out[i] = static_cast<int>(p_(ks_(in.value(i)), num_channels));
  }

 private:
  KS ks_;
  P p_;
};

}  // namespace sluice::runtime
