#pragma once
/// Keyed time windows (Flink's WindowOperator with the tumbling and sliding assigners and the default
/// EventTimeTrigger / ProcessingTimeTrigger): contents are kept per (key, window) as an accumulator in the
/// keyed state backend (namespace = the window), timers in its "window-timers" service; a
/// window fires when the watermark (event time) or the clock (processing time) passes its max timestamp
/// (end - 1); late firings within the allowed lateness fire again; state is dropped at max timestamp +
/// allowed lateness; elements later than that go to the late-data side output or are dropped.
/// Results carry the window's max timestamp. Processing-time windows still open when a bounded input
/// ends are not fired (Flink quiesces pending processing-time timers at the end of input). Threading: task thread only.

#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/operators/keyed_operators.h"

namespace sluice::runtime {

/// Flink's TimeWindow.getWindowStartWithOffset: the start of the window of size `size` containing `ts`.
inline int64_t windowStartWithOffset(int64_t ts, int64_t offset, int64_t size) {
  const int64_t remainder = (ts - offset) % size;
  return remainder < 0 ? ts - (remainder + size) : ts - remainder;
}

/// Which windows an element belongs to: tumbling (slide == size) or sliding, on event or processing time.
struct WindowAssigner {
  int64_t size_ms = 0;
  int64_t slide_ms = 0;
  int64_t offset_ms = 0;
  bool event_time = true;

  /// The windows containing time `ts` (ms), latest start first (Flink's assignWindows order).
  void assign(int64_t ts, std::vector<TimeWindow>& out) const {
    out.clear();
    const int64_t last_start = windowStartWithOffset(ts, offset_ms, slide_ms);
    for (int64_t start = last_start; start > ts - size_ms; start -= slide_ms) out.push_back({start, start + size_ms});
  }
  bool isEventTime() const { return event_time; }
};

/// The per-window logic: how contents accumulate and what a firing emits. `open`/`close` run the user
/// function's lifecycle. One instance per subtask.
template <typename K, typename IN, typename ACC, typename OUT>
struct WindowFunctions {
  std::function<ACC()> create;
  std::function<void(ACC&, const IN&)> add;
  std::function<void(const K&, const TimeWindow&, ACC&, WindowContext<TimeWindow>&, Collector<OUT>&)> emit;
  std::function<void(RuntimeContext&)> open;
  std::function<void()> close;
};

/// The namespace of a window's state and timers: its start and end as TypeSerializer<int64_t> bytes
/// (16 bytes), written into `out` (replaced).
inline void windowNamespace(const TimeWindow& w, std::string& out) {
  out.clear();
  DataOutputView view(out);
  TypeSerializer<int64_t>::serialize(w.start, view);
  TypeSerializer<int64_t>::serialize(w.end, view);
}
/// windowNamespace into a fixed buffer (the same 16 bytes: TypeSerializer<int64_t> writes the number's
/// bytes as they are); returns a view of it.
inline std::string_view windowNamespace(const TimeWindow& w, char (&out)[2 * sizeof(int64_t)]) {
  static_assert(TypeSerializer<int64_t>::kBuiltIn);
  std::memcpy(out, &w.start, sizeof(int64_t));
  std::memcpy(out + sizeof(int64_t), &w.end, sizeof(int64_t));
  return {out, sizeof(out)};
}
/// The window of a namespace written by windowNamespace. InputError when it is not 16 bytes.
inline TimeWindow windowFromNamespace(std::string_view ns) {
  if (ns.size() != 2 * sizeof(int64_t)) {
    throw InputError(fmt::format("a window namespace takes 16 bytes, not {}", ns.size()));
  }
  TimeWindow w;
  std::memcpy(&w.start, ns.data(), sizeof(int64_t));
  std::memcpy(&w.end, ns.data() + sizeof(int64_t), sizeof(int64_t));
  return w;
}

/// The window operator. `late_tag` (optional): side output for elements too late for every window.
/// Window contents are the ValueState<ACC> "window-contents" (Flink's name) in namespace = the window
/// (windowNamespace), its timers those of the timer service "window-timers"; both are checkpointed
/// with the keyed state. An ACC without TypeSerializer works until a checkpoint holds a window of it,
/// which then fails with a UserError naming the type (MissingStateSerializer).
template <typename K, typename IN, typename ACC, typename OUT, typename KS>
class WindowOperator final : public KeyedOperatorBase<K> {
 public:
  WindowOperator(KS key_selector, WindowAssigner assigner, int64_t allowed_lateness_ms,
                 WindowFunctions<K, IN, ACC, OUT> fns, std::optional<OutputTag<IN>> late_tag,
                 std::shared_ptr<ExecutionScopeSlot> slot)
      : KeyedOperatorBase<K>(std::move(slot), "window-timers"), key_selector_(std::move(key_selector)),
        assigner_(assigner), lateness_(allowed_lateness_ms), fns_(std::move(fns)), late_tag_(std::move(late_tag)) {}

  void open(const OperatorContext& ctx, Output* output) override {
    KeyedOperatorBase<K>::open(ctx, output);
    contents_ = &this->backend().getValueState(state::ValueStateDescriptor<ACC, StateSerializer<ACC>>{"window-contents"});
    if (fns_.open) fns_.open(this->runtime_context_);
  }

  void processObjects(ObjectBatchPtr&& batch) override {
    const auto& in = batch->template as<IN>();
    now_.reset();
    for (size_t i = 0; i < in.size(); ++i) processElement(in.value(i), in.timestamp(i));
    afterTimers();
  }

  void close() override {
    if (fns_.close) fns_.close();
    KeyedOperatorBase<K>::close();
  }

 protected:
  void onTimer(int64_t time, std::string_view ns, TimeDomain domain) override {
    const TimeWindow w = windowFromNamespace(ns);
    contents_->setCurrentNamespace(ns);
    ACC* acc = contents_->value();
    if (acc == nullptr) return;
    if (time == w.maxTimestamp()) fire(w, *acc);
    const bool event = domain == TimeDomain::kEventTime;
    const int64_t cleanup = event ? w.maxTimestamp() + lateness_ : w.maxTimestamp();
    if (time == cleanup) contents_->clear();
  }
  void afterTimers() override {
    this->emit(out_.take());
    this->flushSideOutputs();
    now_.reset();
  }

 private:
  void processElement(const IN& value, int64_t ts) {
    this->setCurrentKey(key_selector_(value));
    int64_t t = ts;
    if (assigner_.event_time) {
      if (ts == kNoTimestamp) {
        throw UserError(fmt::format(
            "Record has no timestamp in event-time window operator '{}'. Did you forget to call "
            "assignTimestampsAndWatermarks(...)?",
            this->ctx_.operator_name));
      }
    } else {
      t = now();
    }
    assigner_.assign(t, windows_);
    bool skipped = true;
    state::InternalTimerService& timers = this->timerService();
    CancellationCheck<> cancellation;  // a sliding window with a small slide: thousands of windows per element
    for (const TimeWindow& w : windows_) {
      cancellation.tick();
      if (assigner_.event_time && w.maxTimestamp() + lateness_ <= this->watermark_) continue;  // isWindowLate
      skipped = false;
      const std::string_view ns = windowNamespace(w, ns_);
      contents_->setCurrentNamespace(ns);
      bool created = false;
      ACC* acc = &contents_->valueOrInsertWith([this] { return fns_.create ? fns_.create() : ACC(); }, created);
      fns_.add(*acc, value);
      // Timers of a window are registered when its contents are created and live as long as they do
      // (both are in the same snapshot), so registering them again per element would only be deduplicated.
      if (assigner_.event_time) {
        if (w.maxTimestamp() <= this->watermark_) {
          fire(w, *acc);  // EventTimeTrigger.onElement: a late element within lateness fires at once
        } else if (created) {
          timers.registerEventTimeTimer(ns, w.maxTimestamp());
        }
        if (created && lateness_ > 0) timers.registerEventTimeTimer(ns, w.maxTimestamp() + lateness_);
      } else if (created) {
        timers.registerProcessingTimeTimer(ns, w.maxTimestamp());
        this->scheduleProcessingTimer(w.maxTimestamp());
      }
    }
    // WindowOperator.processElement: a skipped late element goes to the side output, else it is counted.
    if (skipped && assigner_.event_time && ts + lateness_ <= this->watermark_) {
      if (late_tag_) {
        this->side_outputs_.add(*late_tag_, value, ts);
      } else if (this->ctx_.metrics != nullptr) {
        this->ctx_.metrics->num_late_records_dropped.fetch_add(1, std::memory_order_relaxed);
      }
    }
  }

  void fire(const TimeWindow& w, ACC& acc) {
    context_.set(&w, this->watermark_, now(), &this->side_outputs_);
    out_.setTimestamp(w.maxTimestamp());
    fns_.emit(this->currentKey(), w, acc, context_, out_);
  }

  /// The processing time of this round (a batch, a round of timers): one clock read per round, not
  /// per element and firing.
  int64_t now() {
    if (!now_) now_ = this->processingTime();
    return *now_;
  }

  KS key_selector_;
  WindowAssigner assigner_;
  int64_t lateness_;
  WindowFunctions<K, IN, ACC, OUT> fns_;
  std::optional<OutputTag<IN>> late_tag_;
  state::ValueState<ACC, StateSerializer<ACC>>* contents_ = nullptr;
  char ns_[2 * sizeof(int64_t)] = {};
  std::vector<TimeWindow> windows_;
  BatchCollector<OUT> out_;
  WindowContext<TimeWindow> context_;
  std::optional<int64_t> now_;
};

}  // namespace sluice::runtime
