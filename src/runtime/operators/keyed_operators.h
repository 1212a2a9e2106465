#pragma once
/// Keyed DataStream operators: heap keyed state by key index, event- and processing-time timers per key
/// (Flink's HeapKeyedStateBackend + InternalTimerService), keyed reduce / sum / min / max
/// (StreamGroupedReduceOperator), KeyedProcessOperator, and the two-input operators of connected streams
/// (CoStreamMap, CoProcessOperator, KeyedCoProcessOperator). Threading: task thread only.

#include <memory>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "runtime/operators/object_operators.h"
#include "runtime/serialization/key_hash.h"

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

/// The keys an operator has seen, each with a dense index used by ValueState and timers.
template <typename K>
class KeyedBackend final : public KeyContext {
 public:
  /// Makes `key` the current key (registering it on first sight).
  void setCurrentKey(const K& key) {
    auto [it, inserted] = index_.try_emplace(key, static_cast<uint32_t>(keys_.size()));
    if (inserted) keys_.push_back(key);
    current_ = it->second;
  }
  void setCurrentKeyIndex(uint32_t i) { current_ = i; }
  const K& currentKey() const { return keys_[current_]; }
  size_t numKeys() const { return keys_.size(); }

 private:
  std::unordered_map<K, uint32_t, StableKeyHasher> index_;
  std::vector<K> keys_;
};

/// Timers ordered by (time, key index, namespace); a timer is set at most once (Flink's
/// InternalTimerService: duplicates collapse). The namespace distinguishes windows of one key.
class TimerQueue {
 public:
  using Timer = std::tuple<int64_t, uint32_t, int64_t>;  ///< time ms, key index, namespace
  void add(int64_t time, uint32_t key, int64_t ns = 0) { timers_.emplace(time, key, ns); }
  void remove(int64_t time, uint32_t key, int64_t ns = 0) { timers_.erase(Timer{time, key, ns}); }
  /// Removes and returns the earliest timer with time <= `until`.
  std::optional<Timer> pollUntil(int64_t until) {
    if (timers_.empty() || std::get<0>(*timers_.begin()) > until) return std::nullopt;
    Timer t = *timers_.begin();
    timers_.erase(timers_.begin());
    return t;
  }
  std::optional<int64_t> earliest() const {
    return timers_.empty() ? std::nullopt : std::optional<int64_t>(std::get<0>(*timers_.begin()));
  }
  bool empty() const { return timers_.empty(); }

 private:
  std::set<Timer> timers_;
};

/// Base of keyed operators: the key backend, event-time and processing-time timer queues, the
/// TimerService a function sees, and timer firing on watermarks and on the task's processing-time service.
/// Subclasses implement onTimer (key already set). As in Flink (FLINK-14231), processing-time timers still
/// pending when the input ends are not fired; event-time timers all fire on the final watermark.
template <typename K>
class KeyedOperatorBase : public ObjectOperator, public TimerService {
 public:
  using ObjectOperator::ObjectOperator;

  int64_t currentProcessingTime() const override { return processingTime(); }
  int64_t currentWatermark() const override { return watermark_; }
  void registerEventTimeTimer(int64_t time) override { event_timers_.add(time, keys_.currentKeyIndex(), 0); }
  void registerProcessingTimeTimer(int64_t time) override { addProcessingTimer(time, keys_.currentKeyIndex(), 0); }
  void deleteEventTimeTimer(int64_t time) override { event_timers_.remove(time, keys_.currentKeyIndex(), 0); }
  void deleteProcessingTimeTimer(int64_t time) override {
    processing_timers_.remove(time, keys_.currentKeyIndex(), 0);
  }

  /// Fires every event-time timer <= the watermark (timers set while firing included), then forwards it.
  void processWatermark(Watermark mark) override {
    watermark_ = mark.timestamp;
    while (auto t = event_timers_.pollUntil(mark.timestamp)) {
      keys_.setCurrentKeyIndex(std::get<1>(*t));
      onTimer(std::get<0>(*t), std::get<2>(*t), TimeDomain::kEventTime);
    }
    afterTimers();
    output_->emitWatermark(mark);
  }

 protected:
  const KeyContext* keyContext() const override { return &keys_; }
  /// A timer fired for the current key; `ns` is its namespace.
  virtual void onTimer(int64_t time, int64_t ns, TimeDomain domain) = 0;
  /// Called after a round of timers (flush outputs).
  virtual void afterTimers() {}

  void addProcessingTimer(int64_t time, uint32_t key, int64_t ns) {
    processing_timers_.add(time, key, ns);
    if (ctx_.processing_time_service != nullptr && scheduled_.insert(time).second) {
      ctx_.processing_time_service->registerTimer(time, [this](int64_t now) { fireProcessingTimers(now); });
    }
  }
  void fireProcessingTimers(int64_t until) {
    scheduled_.erase(until);
    bool fired = false;
    while (auto t = processing_timers_.pollUntil(until)) {
      keys_.setCurrentKeyIndex(std::get<1>(*t));
      onTimer(std::get<0>(*t), std::get<2>(*t), TimeDomain::kProcessingTime);
      fired = true;
    }
    if (fired) afterTimers();
  }

  KeyedBackend<K> keys_;
  TimerQueue event_timers_;
  TimerQueue processing_timers_;
  std::set<int64_t> scheduled_;
  int64_t watermark_ = Watermark::kMinTimestamp;
};

/// Rolling reduce per key (Flink's StreamGroupedReduceOperator): in STREAMING every record emits the key's
/// updated value; in BATCH runtime mode only the final value per key is emitted at the end of input.
template <typename K, typename T, typename KS, typename R>
class KeyedReduceOperator final : public KeyedOperatorBase<K> {
 public:
  KeyedReduceOperator(KS key_selector, R reducer, bool batch_mode, std::shared_ptr<ExecutionScopeSlot> slot)
      : KeyedOperatorBase<K>(std::move(slot)), key_selector_(std::move(key_selector)),
        reducer_(std::move(reducer)), batch_mode_(batch_mode) {}
  void open(const OperatorContext& ctx, Output* output) override {
    KeyedOperatorBase<K>::open(ctx, output);
    this->openFunction(reducer_);
  }
  void processObjects(ObjectBatchPtr&& batch) override {
    const auto& in = batch->template as<T>();
    auto out = makeObjectBatch<T>();
    for (size_t i = 0; i < in.size(); ++i) {
      this->keys_.setCurrentKey(key_selector_(in.value(i)));
      const uint32_t k = this->keys_.currentKeyIndex();
      if (k >= values_.size()) values_.resize(k + 1);
      auto& cur = values_[k];
      if (cur) cur = invokeReduce(reducer_, *cur, in.value(i));
      else cur = in.value(i);
      if (!batch_mode_) out->add(*cur, in.timestamp(i));
    }
    this->emit(std::move(out));
  }
  void endInput() override {
    if (!batch_mode_) return;
    auto out = makeObjectBatch<T>();
    for (auto& v : values_) {
      if (v) out->add(std::move(*v));
    }
    values_.clear();
    this->emit(std::move(out));
  }
  void close() override {
    this->closeFunction(reducer_);
    KeyedOperatorBase<K>::close();
  }

 protected:
  void onTimer(int64_t, int64_t, TimeDomain) override {}

 private:
  KS key_selector_;
  R reducer_;
  bool batch_mode_;
  std::vector<std::optional<T>> values_;  ///< by key index
};

/// keyBy(...).process(KeyedProcessFunction) (Flink's KeyedProcessOperator).
template <typename KS, typename F>
class KeyedProcessOperator final : public KeyedOperatorBase<typename F::KeyType> {
 public:
  using K = typename F::KeyType;
  using I = typename F::InputType;
  using O = typename F::OutputType;
  KeyedProcessOperator(KS key_selector, F fn, std::shared_ptr<ExecutionScopeSlot> slot)
      : KeyedOperatorBase<K>(std::move(slot)), key_selector_(std::move(key_selector)), fn_(std::move(fn)) {}
  void open(const OperatorContext& ctx, Output* output) override {
    KeyedOperatorBase<K>::open(ctx, output);
    context_.bind(this, &this->side_outputs_);
    timer_context_.bind(this, &this->side_outputs_);
    this->openFunction(fn_);
  }
  void processObjects(ObjectBatchPtr&& batch) override {
    const auto& in = batch->template as<I>();
    for (size_t i = 0; i < in.size(); ++i) {
      this->keys_.setCurrentKey(key_selector_(in.value(i)));
      context_.setKey(&this->keys_.currentKey());
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
  void onTimer(int64_t time, int64_t, TimeDomain domain) override {
    fireKeyedTimer(fn_, timer_context_, out_, &this->keys_.currentKey(), time, domain);
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
      : KeyedOperatorBase<K>(std::move(slot)), ks1_(std::move(ks1)), ks2_(std::move(ks2)), fn_(std::move(fn)) {}
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
  void onTimer(int64_t time, int64_t, TimeDomain domain) override {
    fireKeyedTimer(fn_, timer_context_, out_, &this->keys_.currentKey(), time, domain);
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
      if constexpr (N == 1) this->keys_.setCurrentKey(ks1_(in.value(i)));
      else this->keys_.setCurrentKey(ks2_(in.value(i)));
      context_.setKey(&this->keys_.currentKey());
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
