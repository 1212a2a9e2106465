#pragma once
/// The user-function interfaces of the DataStream API (Flink's org.apache.flink.api.common.functions and
/// streaming.api.functions): Collector, OutputTag, RuntimeContext, RichFunction, the keyed state handles
/// (ValueState, ListState, MapState, ReducingState, AggregatingState over runtime/state's keyed backend),
/// TimerService, ProcessFunction, KeyedProcessFunction, CoProcessFunction, KeyedCoProcessFunction, AggregateFunction,
/// ProcessWindowFunction and TimeWindow. They live in runtime because the operators that call them do;
/// `api/` re-exports them under sluice::api.
///
/// Threading: a function instance belongs to one subtask and is called only from its task thread.

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "common/error.h"
#include "runtime/object_batch.h"
#include "runtime/serialization/object_batch_serializer.h"
#include "runtime/serialization/type_serializer.h"
#include "runtime/state/keyed_state_backend.h"

namespace sluice::runtime {

/// Receives the output records of a function (Flink's Collector).
template <typename T>
class Collector {
 public:
  virtual ~Collector() = default;
  /// Emits one record (with the timestamp of the record being processed, if any).
  virtual void collect(T value) = 0;
};

/// The process-wide id of the side output named `id` (>= 1; the same name always gives the same id).
int outputTagId(const std::string& id);

/// Names a side output of type T (Flink's OutputTag). Tags with the same id are the same side output.
template <typename T>
class OutputTag {
 public:
  using Type = T;
  explicit OutputTag(std::string id) : id_(std::move(id)), tag_(outputTagId(id_)) {}
  const std::string& getId() const { return id_; }
  /// The numeric tag carried by ObjectBatch::tag().
  int tag() const { return tag_; }

 private:
  std::string id_;
  int tag_;
};

/// Records of side outputs emitted while processing one input batch, flushed after it (task thread).
class SideOutputBuffer {
 public:
  template <typename X>
  void add(const OutputTag<X>& tag, X value, int64_t timestamp) {
    ObjectBatchPtr& b = buffers_[tag.tag()];
    if (!b) {
      b = makeObjectBatch<X>();
      b->setTag(tag.tag());
    }
    b->as<X>().add(std::move(value), timestamp);
  }
  /// Hands every non-empty buffer to `emit` and empties the buffer.
  template <typename Fn>
  void flush(Fn&& emit) {
    for (auto& [tag, b] : buffers_) {
      if (b && !b->empty()) emit(std::move(b));
      b.reset();
    }
  }

 private:
  std::map<int, ObjectBatchPtr> buffers_;
};

/// A job-wide sum (Flink's LongCounter accumulator). Subtasks add locally; the job result merges them.
class LongCounter {
 public:
  void add(int64_t v) { value_ += v; }
  int64_t getLocalValue() const { return value_; }

 private:
  int64_t value_ = 0;
};

/// Where subtasks merge their accumulators at close (owned by the execution; thread-safe).
class AccumulatorRegistry {
 public:
  void merge(const std::string& name, int64_t value);
  std::map<std::string, int64_t> snapshot() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, int64_t> values_;
};

/// The serializer of keyed state values of type T that have no TypeSerializer (hasTypeSerializer is
/// false): such state works until it must be checkpointed; then the snapshot (or a restore) throws a
/// UserError naming the type, as Flink fails a job whose state type has no TypeInformation serializer.
template <typename T>
struct MissingStateSerializer {
  [[noreturn]] static void serialize(const T&, DataOutputView&) { fail(); }
  [[noreturn]] static T deserialize(DataInputView&) { fail(); }

 private:
  [[noreturn]] static void fail() {
    const std::string name = readableTypeName(typeid(T));
    throw UserError(fmt::format(
        "keyed state of type {} cannot be checkpointed: the type has no TypeSerializer. Declare it (and its "
        "fields) with SLUICE_TYPE, or specialize TypeSerializer<{}>",
        name, name));
  }
};

/// The serializer keyed state uses for T: TypeSerializer<T> when T has one, else MissingStateSerializer<T>.
template <typename T>
using StateSerializer = std::conditional_t<hasTypeSerializer<T>(), TypeSerializer<T>, MissingStateSerializer<T>>;

/// Keyed single-value state of the current key (Flink's ValueState): a handle on the operator's keyed
/// state backend, so the value is checkpointed and rescaled with the key's key group.
template <typename V>
class ValueState {
 public:
  using BackendState = state::ValueState<V, StateSerializer<V>>;
  explicit ValueState(BackendState* s) : s_(s) {}
  /// The current key's value (a copy); nullopt when never set or cleared (Flink's null).
  std::optional<V> value() const {
    const V* v = s_->value();
    return v == nullptr ? std::nullopt : std::optional<V>(*v);
  }
  /// Sets the current key's value.
  void update(V v) { s_->update(std::move(v)); }
  /// Removes the current key's value.
  void clear() { s_->clear(); }

 private:
  BackendState* s_;
};

/// Keyed list state of the current key (Flink's ListState). An empty list is no state.
template <typename V>
class ListState {
 public:
  using BackendState = state::ListState<V, StateSerializer<V>>;
  explicit ListState(BackendState* s) : s_(s) {}
  /// The current key's elements in the order added (a copy); empty when none.
  std::vector<V> get() const {
    const std::vector<V>* l = s_->get();
    return l == nullptr ? std::vector<V>() : *l;
  }
  void add(V v) { s_->add(std::move(v)); }
  void addAll(std::vector<V> values) { s_->addAll(std::move(values)); }
  /// Replaces the current key's list (an empty list clears it).
  void update(std::vector<V> values) { s_->update(std::move(values)); }
  void clear() { s_->clear(); }

 private:
  BackendState* s_;
};

/// Keyed map state of the current key (Flink's MapState). Iteration order is unspecified (a hash map
/// when std::hash<UK> exists, else ordered by UK's <), as with Flink's heap backend.
template <typename UK, typename UV>
class MapState {
 public:
  using BackendState = state::MapState<UK, UV, StateSerializer<UK>, StateSerializer<UV>>;
  explicit MapState(BackendState* s) : s_(s) {}
  /// The value of `key` (a copy), nullopt when absent.
  std::optional<UV> get(const UK& key) const {
    const UV* v = s_->get(key);
    return v == nullptr ? std::nullopt : std::optional<UV>(*v);
  }
  void put(UK key, UV value) { s_->put(std::move(key), std::move(value)); }
  void putAll(std::vector<std::pair<UK, UV>> entries) {
    for (auto& [k, v] : entries) s_->put(std::move(k), std::move(v));
  }
  void remove(const UK& key) { s_->remove(key); }
  bool contains(const UK& key) const { return s_->contains(key); }
  bool isEmpty() const { return s_->isEmpty(); }
  /// The current key's entries (copies).
  std::vector<std::pair<UK, UV>> entries() const {
    std::vector<std::pair<UK, UV>> out;
    if (const auto* m = s_->entries()) out.assign(m->begin(), m->end());
    return out;
  }
  std::vector<UK> keys() const {
    std::vector<UK> out;
    if (const auto* m = s_->entries()) for (const auto& e : *m) out.push_back(e.first);
    return out;
  }
  std::vector<UV> values() const {
    std::vector<UV> out;
    if (const auto* m = s_->entries()) for (const auto& e : *m) out.push_back(e.second);
    return out;
  }
  void clear() { s_->clear(); }

 private:
  BackendState* s_;
};

/// Keyed state that folds the values added for the current key with a reduce function (Flink's
/// ReducingState).
template <typename V>
class ReducingState {
 public:
  using BackendState = state::ReducingState<V, StateSerializer<V>>;
  explicit ReducingState(BackendState* s) : s_(s) {}
  /// The reduced value (a copy), nullopt when nothing was added.
  std::optional<V> get() const {
    const V* v = s_->get();
    return v == nullptr ? std::nullopt : std::optional<V>(*v);
  }
  /// Folds `v` in: reduce(current, v), or v when there is none.
  void add(V v) { s_->add(std::move(v)); }
  void clear() { s_->clear(); }

 private:
  BackendState* s_;
};

/// Keyed state that aggregates the values added for the current key with an AggregateFunction into an
/// accumulator (Flink's AggregatingState<IN, OUT>; the accumulator type is the descriptor's).
template <typename IN, typename OUT>
class AggregatingState {
 public:
  virtual ~AggregatingState() = default;
  /// getResult of the current key's accumulator, nullopt when nothing was added.
  virtual std::optional<OUT> get() = 0;
  /// Adds `value` into the current key's accumulator (created first when absent).
  virtual void add(const IN& value) = 0;
  virtual void clear() = 0;
};

namespace internal {
template <typename IN, typename ACC, typename OUT>
class AggregatingStateHandle final : public AggregatingState<IN, OUT> {
 public:
  using BackendState = state::AggregatingState<IN, ACC, OUT, StateSerializer<ACC>>;
  explicit AggregatingStateHandle(BackendState* s) : s_(s) {}
  std::optional<OUT> get() override { return s_->get(); }
  void add(const IN& value) override { s_->add(value); }
  void clear() override { s_->clear(); }

 private:
  BackendState* s_;
};
}  // namespace internal

/// Names a ValueState (Flink's ValueStateDescriptor).
template <typename V>
struct ValueStateDescriptor {
  explicit ValueStateDescriptor(std::string n) : name(std::move(n)) {}
  std::string name;
};

/// Names a ListState (Flink's ListStateDescriptor).
template <typename V>
struct ListStateDescriptor {
  explicit ListStateDescriptor(std::string n) : name(std::move(n)) {}
  std::string name;
};

/// Names a MapState (Flink's MapStateDescriptor).
template <typename UK, typename UV>
struct MapStateDescriptor {
  explicit MapStateDescriptor(std::string n) : name(std::move(n)) {}
  std::string name;
};

/// Names a ReducingState and its reduce function (Flink's ReducingStateDescriptor): `reduce` is
/// `V(const V&, const V&)` or an object with `V reduce(const V&, const V&)` (a ReduceFunction<V>).
template <typename V>
struct ReducingStateDescriptor {
  template <typename F>
  ReducingStateDescriptor(std::string n, F reduce_fn) : name(std::move(n)) {
    if constexpr (std::is_invocable_r_v<V, F&, const V&, const V&>) {
      reduce = std::move(reduce_fn);
    } else {
      auto f = std::make_shared<F>(std::move(reduce_fn));
      reduce = [f](const V& a, const V& b) { return f->reduce(a, b); };
    }
  }
  std::string name;
  std::function<V(const V&, const V&)> reduce;
};

/// Names an AggregatingState and its AggregateFunction<IN, ACC, OUT> (Flink's AggregatingStateDescriptor);
/// the function object is copied. Only the accumulator is stored.
template <typename IN, typename ACC, typename OUT>
struct AggregatingStateDescriptor {
  template <typename A>
  AggregatingStateDescriptor(std::string name, A agg)
      : desc(state::makeAggregatingStateDescriptor<IN, ACC, OUT, StateSerializer<ACC>>(
            std::move(name), std::make_shared<A>(std::move(agg)))) {}
  state::AggregatingStateDescriptor<IN, ACC, OUT, StateSerializer<ACC>> desc;
};

/// Facts about the subtask and access to keyed state and accumulators (Flink's RuntimeContext).
class RuntimeContext {
 public:
  int getIndexOfThisSubtask() const { return subtask_; }
  int getNumberOfParallelSubtasks() const { return parallelism_; }
  int getMaxNumberOfParallelSubtasks() const { return max_parallelism_; }
  const std::string& getTaskName() const { return task_name_; }
  /// The subtask's counter `name`, merged over subtasks into JobExecutionResult::accumulators.
  LongCounter& getLongCounter(const std::string& name) { return counters_[name]; }

  /// Keyed state of the current key, kept in the operator's keyed state backend (checkpointed, and
  /// redistributed by key group on rescaling). The same handle for the same name; the reference stays
  /// valid until the operator closes. Throws UserError outside a keyed stream (Flink: "Keyed state can
  /// only be used on a 'keyed stream'") and when the name is already taken by a state of another kind or
  /// type. Values of a type without TypeSerializer work until a checkpoint needs their bytes (then
  /// UserError naming the type, see MissingStateSerializer).
  template <typename V>
  ValueState<V>& getState(const ValueStateDescriptor<V>& desc) {
    return handle<ValueState<V>>(backend(desc.name).getValueState(
        state::ValueStateDescriptor<V, StateSerializer<V>>{desc.name}));
  }
  /// Keyed list state (Flink's getListState); as getState.
  template <typename V>
  ListState<V>& getListState(const ListStateDescriptor<V>& desc) {
    return handle<ListState<V>>(backend(desc.name).getListState(
        state::ListStateDescriptor<V, StateSerializer<V>>{desc.name}));
  }
  /// Keyed map state (Flink's getMapState); as getState.
  template <typename UK, typename UV>
  MapState<UK, UV>& getMapState(const MapStateDescriptor<UK, UV>& desc) {
    return handle<MapState<UK, UV>>(backend(desc.name).getMapState(
        state::MapStateDescriptor<UK, UV, StateSerializer<UK>, StateSerializer<UV>>{desc.name}));
  }
  /// Keyed reducing state (Flink's getReducingState); as getState.
  template <typename V>
  ReducingState<V>& getReducingState(const ReducingStateDescriptor<V>& desc) {
    return handle<ReducingState<V>>(backend(desc.name).getReducingState(
        state::ReducingStateDescriptor<V, StateSerializer<V>>{desc.name, desc.reduce}));
  }
  /// Keyed aggregating state (Flink's getAggregatingState); as getState.
  template <typename IN, typename ACC, typename OUT>
  AggregatingState<IN, OUT>& getAggregatingState(const AggregatingStateDescriptor<IN, ACC, OUT>& desc) {
    return handle<internal::AggregatingStateHandle<IN, ACC, OUT>>(
        backend(desc.desc.name).getAggregatingState(desc.desc));
  }

  /// Operator side: fills in the facts (before the function's open). `keyed`: the operator's keyed
  /// state backend, null on a non-keyed stream.
  void init(int subtask, int parallelism, int max_parallelism, std::string task_name,
            state::KeyedStateBackend* keyed) {
    subtask_ = subtask;
    parallelism_ = parallelism;
    max_parallelism_ = max_parallelism;
    task_name_ = std::move(task_name);
    keyed_ = keyed;
    states_.clear();
  }
  /// Operator side: merges the local counters into `registry` (at close).
  void publishAccumulators(AccumulatorRegistry* registry) {
    if (registry == nullptr) return;
    for (const auto& [name, c] : counters_) registry->merge(name, c.getLocalValue());
    counters_.clear();
  }

 private:
  struct StateHandle {
    const void* backend_state = nullptr;  ///< what the handle points at (the backend checks the type)
    std::shared_ptr<void> handle;
  };

  state::KeyedStateBackend& backend(const std::string& state_name) const {
    if (keyed_ == nullptr) {
      throw UserError(fmt::format("Keyed state '{}' can only be used on a keyed stream (keyBy) in '{}'", state_name,
                                  task_name_));
    }
    return *keyed_;
  }
  /// The handle of type H on `s`, made once per backend state.
  template <typename H, typename S>
  H& handle(S& s) {
    StateHandle& slot = states_[s.name()];
    if (slot.backend_state != &s) {
      slot.backend_state = &s;
      slot.handle = std::make_shared<H>(&s);
    }
    return *static_cast<H*>(slot.handle.get());
  }

  int subtask_ = 0;
  int parallelism_ = 1;
  int max_parallelism_ = 128;
  std::string task_name_;
  state::KeyedStateBackend* keyed_ = nullptr;
  std::map<std::string, LongCounter> counters_;
  /// The user-facing handles by state name: views that hold no values (those live in the keyed backend,
  /// which snapshots and restores them); rebuilt when the backend's state object changes.
  std::map<std::string, StateHandle> states_;
};

/// A function with a lifecycle and a RuntimeContext (Flink's RichFunction).
class RichFunction {
 public:
  virtual ~RichFunction() = default;
  /// Called once per subtask before the first record (state is obtained here).
  virtual void open() {}
  /// Called once after the last record.
  virtual void close() {}
  RuntimeContext& getRuntimeContext() { return *runtime_context_; }
  /// Operator side.
  void setRuntimeContext(RuntimeContext* rc) { runtime_context_ = rc; }

 private:
  RuntimeContext* runtime_context_ = nullptr;
};

/// Time and timers as a function sees them (Flink's TimerService). Timers exist only on keyed streams.
class TimerService {
 public:
  virtual ~TimerService() = default;
  /// Wall-clock time of the task in ms.
  virtual int64_t currentProcessingTime() const = 0;
  /// The operator's current event-time watermark in ms (Long.MIN_VALUE before the first).
  virtual int64_t currentWatermark() const = 0;
  /// Calls onTimer for the current key once the watermark reaches `time` (ms). Duplicates collapse.
  virtual void registerEventTimeTimer(int64_t time) = 0;
  /// Calls onTimer for the current key once processing time reaches `time` (ms).
  virtual void registerProcessingTimeTimer(int64_t time) = 0;
  virtual void deleteEventTimeTimer(int64_t time) = 0;
  virtual void deleteProcessingTimeTimer(int64_t time) = 0;
};

/// Which clock fired a timer.
enum class TimeDomain { kEventTime, kProcessingTime };

/// What every process-function context offers: the record's timestamp, timers, side outputs.
class ProcessContextBase {
 public:
  virtual ~ProcessContextBase() = default;
  /// Timestamp (ms) of the record being processed, or of the firing timer; nullopt when it has none.
  std::optional<int64_t> timestamp() const {
    return timestamp_ == kNoTimestamp ? std::nullopt : std::optional<int64_t>(timestamp_);
  }
  TimerService& timerService() { return *timers_; }
  /// Emits `value` to the side output `tag` (read with DataStream::getSideOutput).
  template <typename X>
  void output(const OutputTag<X>& tag, X value) {
    side_->add(tag, std::move(value), timestamp_);
  }

  /// Operator side.
  void bind(TimerService* timers, SideOutputBuffer* side) {
    timers_ = timers;
    side_ = side;
  }
  void setTimestamp(int64_t ts) { timestamp_ = ts; }
  int64_t rawTimestamp() const { return timestamp_; }

 private:
  int64_t timestamp_ = kNoTimestamp;
  TimerService* timers_ = nullptr;
  SideOutputBuffer* side_ = nullptr;
};

/// Low-level processing of a (non-keyed) stream (Flink's ProcessFunction).
template <typename I, typename O>
class ProcessFunction : public RichFunction {
 public:
  using InputType = I;
  using OutputType = O;
  using Context = ProcessContextBase;
  virtual void processElement(const I& value, Context& ctx, Collector<O>& out) = 0;
};

/// Context of a keyed function: also the current key.
template <typename K>
class KeyedContext : public ProcessContextBase {
 public:
  const K& getCurrentKey() const { return *key_; }
  void setKey(const K* key) { key_ = key; }

 private:
  const K* key_ = nullptr;
};

/// Context of an onTimer call: also the timer's domain.
template <typename K>
class OnTimerContext : public KeyedContext<K> {
 public:
  TimeDomain timeDomain() const { return domain_; }
  void setDomain(TimeDomain d) { domain_ = d; }

 private:
  TimeDomain domain_ = TimeDomain::kEventTime;
};

/// Processing of a keyed stream with keyed state and timers (Flink's KeyedProcessFunction).
template <typename K, typename I, typename O>
class KeyedProcessFunction : public RichFunction {
 public:
  using KeyType = K;
  using InputType = I;
  using OutputType = O;
  using Context = KeyedContext<K>;
  using OnTimerContext = runtime::OnTimerContext<K>;
  virtual void processElement(const I& value, Context& ctx, Collector<O>& out) = 0;
  /// A registered timer fired; `timestamp` (ms) is the timer's time.
  virtual void onTimer(int64_t timestamp, OnTimerContext& ctx, Collector<O>& out) {
    (void)timestamp;
    (void)ctx;
    (void)out;
  }
};

/// Processing of two connected streams (Flink's CoProcessFunction).
template <typename I1, typename I2, typename O>
class CoProcessFunction : public RichFunction {
 public:
  using Input1Type = I1;
  using Input2Type = I2;
  using OutputType = O;
  using Context = ProcessContextBase;
  virtual void processElement1(const I1& value, Context& ctx, Collector<O>& out) = 0;
  virtual void processElement2(const I2& value, Context& ctx, Collector<O>& out) = 0;
};

/// Processing of two connected keyed streams with shared keyed state and timers (Flink's
/// KeyedCoProcessFunction).
template <typename K, typename I1, typename I2, typename O>
class KeyedCoProcessFunction : public RichFunction {
 public:
  using KeyType = K;
  using Input1Type = I1;
  using Input2Type = I2;
  using OutputType = O;
  using Context = KeyedContext<K>;
  using OnTimerContext = runtime::OnTimerContext<K>;
  virtual void processElement1(const I1& value, Context& ctx, Collector<O>& out) = 0;
  virtual void processElement2(const I2& value, Context& ctx, Collector<O>& out) = 0;
  virtual void onTimer(int64_t timestamp, OnTimerContext& ctx, Collector<O>& out) {
    (void)timestamp;
    (void)ctx;
    (void)out;
  }
};

/// A time window [start, end) in ms (Flink's TimeWindow).
struct TimeWindow {
  int64_t start = 0;
  int64_t end = 0;
  int64_t getStart() const { return start; }
  int64_t getEnd() const { return end; }
  /// The largest timestamp inside the window: end - 1.
  int64_t maxTimestamp() const { return end - 1; }
  bool operator==(const TimeWindow& o) const { return start == o.start && end == o.end; }
  bool operator<(const TimeWindow& o) const { return start != o.start ? start < o.start : end < o.end; }
};

/// Incremental aggregation (Flink's AggregateFunction<IN, ACC, OUT>).
template <typename IN, typename ACC, typename OUT>
class AggregateFunction {
 public:
  using InputType = IN;
  using AccumulatorType = ACC;
  using OutputType = OUT;
  virtual ~AggregateFunction() = default;
  virtual ACC createAccumulator() = 0;
  /// Adds `value` into `acc` and returns the new accumulator.
  virtual ACC add(const IN& value, ACC acc) = 0;
  virtual OUT getResult(const ACC& acc) = 0;
  virtual ACC merge(ACC a, ACC b) = 0;
};

/// Context of a window function call.
template <typename W>
class WindowContext {
 public:
  const W& window() const { return *window_; }
  int64_t currentWatermark() const { return watermark_; }
  int64_t currentProcessingTime() const { return processing_time_; }
  /// Emits to a side output.
  template <typename X>
  void output(const OutputTag<X>& tag, X value) {
    side_->add(tag, std::move(value), window_->maxTimestamp());
  }
  void set(const W* w, int64_t watermark, int64_t processing_time, SideOutputBuffer* side) {
    window_ = w;
    watermark_ = watermark;
    processing_time_ = processing_time;
    side_ = side;
  }

 private:
  const W* window_ = nullptr;
  int64_t watermark_ = 0;
  int64_t processing_time_ = 0;
  SideOutputBuffer* side_ = nullptr;
};

/// Full-window processing with all elements of a key's window (Flink's ProcessWindowFunction).
template <typename IN, typename OUT, typename KEY, typename W = TimeWindow>
class ProcessWindowFunction : public RichFunction {
 public:
  using InputType = IN;
  using OutputType = OUT;
  using KeyType = KEY;
  using Context = WindowContext<W>;
  /// `elements` in arrival order (for aggregate/reduce + process: the one pre-aggregated value).
  virtual void process(const KEY& key, Context& ctx, const std::vector<IN>& elements, Collector<OUT>& out) = 0;
};

}  // namespace sluice::runtime
