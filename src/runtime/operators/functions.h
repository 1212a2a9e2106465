#pragma once
/// The user-function interfaces of the DataStream API (Flink's org.apache.flink.api.common.functions and
/// streaming.api.functions): Collector, OutputTag, RuntimeContext, RichFunction, ValueState, TimerService,
/// ProcessFunction, KeyedProcessFunction, CoProcessFunction, KeyedCoProcessFunction, AggregateFunction,
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
#include <vector>

#include "common/error.h"
#include "runtime/object_batch.h"

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

/// Dense per-key slots for heap keyed state: every key the operator sees gets a small index.
class KeyContext {
 public:
  virtual ~KeyContext() = default;
  /// Index of the key set by the operator for the record or timer being processed.
  uint32_t currentKeyIndex() const { return current_; }

 protected:
  uint32_t current_ = 0;
};

/// Keyed single-value state (Flink's ValueState), scoped to the current key. Heap backend.
template <typename V>
class ValueState {
 public:
  explicit ValueState(const KeyContext* keys) : keys_(keys) {}
  /// The current key's value; nullopt when never set or cleared (Flink's null).
  std::optional<V> value() const {
    const uint32_t k = keys_->currentKeyIndex();
    return k < values_.size() ? values_[k] : std::nullopt;
  }
  /// Sets the current key's value.
  void update(V v) {
    const uint32_t k = keys_->currentKeyIndex();
    if (k >= values_.size()) values_.resize(k + 1);
    values_[k] = std::move(v);
  }
  /// Removes the current key's value.
  void clear() {
    const uint32_t k = keys_->currentKeyIndex();
    if (k < values_.size()) values_[k].reset();
  }

 private:
  const KeyContext* keys_;
  std::vector<std::optional<V>> values_;
};

/// Names a ValueState (Flink's ValueStateDescriptor).
template <typename V>
struct ValueStateDescriptor {
  explicit ValueStateDescriptor(std::string n) : name(std::move(n)) {}
  std::string name;
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
  /// Keyed state of the current key. Throws UserError outside a keyed stream (Flink: "Keyed state can
  /// only be used on a 'keyed stream'").
  template <typename V>
  ValueState<V>& getState(const ValueStateDescriptor<V>& desc) {
    if (keys_ == nullptr) {
      throw UserError(fmt::format("Keyed state '{}' can only be used on a keyed stream (keyBy) in '{}'", desc.name,
                                  task_name_));
    }
    std::shared_ptr<void>& slot = states_[desc.name];
    if (!slot) slot = std::make_shared<ValueState<V>>(keys_);
    return *static_cast<ValueState<V>*>(slot.get());
  }

  /// Operator side: fills in the facts (before the function's open).
  void init(int subtask, int parallelism, int max_parallelism, std::string task_name, const KeyContext* keys) {
    subtask_ = subtask;
    parallelism_ = parallelism;
    max_parallelism_ = max_parallelism;
    task_name_ = std::move(task_name);
    keys_ = keys;
  }
  /// Operator side: merges the local counters into `registry` (at close).
  void publishAccumulators(AccumulatorRegistry* registry) {
    if (registry == nullptr) return;
    for (const auto& [name, c] : counters_) registry->merge(name, c.getLocalValue());
    counters_.clear();
  }

 private:
  int subtask_ = 0;
  int parallelism_ = 1;
  int max_parallelism_ = 128;
  std::string task_name_;
  const KeyContext* keys_ = nullptr;
  std::map<std::string, LongCounter> counters_;
  std::map<std::string, std::shared_ptr<void>> states_;
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
