#pragma once
/// KeyedStream<K, T> (a stream partitioned by key, Flink's KeyedStream) and WindowedStream<K, T>
/// (Flink's WindowedStream). Include "api/datastream.h" for the whole API.

#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "api/data_stream.h"
#include "runtime/operators/keyed_input_sorter.h"

namespace sluice::api {

template <typename K, typename T>
class WindowedStream;

/// A stream hash-partitioned by a key selector; keyed operators keep state and timers per key.
template <typename K, typename T>
class KeyedStream : public DataStream<T> {
 public:
  using KeySelector = std::function<K(const T&)>;

  KeyedStream(const DataStream<T>& partitioned, KeySelector ks) : DataStream<T>(partitioned), key_selector_(std::move(ks)) {}

  const KeySelector& getKeySelector() const { return key_selector_; }

  /// Rolling reduce per key: `fn` is `T(const T&, const T&)` or a ReduceFunction<T>. STREAMING emits the
  /// updated value per record; BATCH only the final value per key.
  template <typename F>
  DataStream<T> reduce(F fn) const {
    return this->template transform<T>(
        "Keyed Reduce", sorted(detail::makeFactory<runtime::KeyedReduceOperator<K, T, KeySelector, F>>(
                            false, graph::ChainingStrategy::kAlways, key_selector_, fn, this->env_->isBatchMode(),
                            this->env_->scopeSlot())));
  }
  /// Rolling sum of a field (member pointer, e.g. &std::pair<std::string, int64_t>::second or &Flight::delay);
  /// the other fields keep the values of the key's first record (Flink's sum(field)).
  template <typename Field>
    requires std::is_member_object_pointer_v<Field>
  DataStream<T> sum(Field field) const {
    return aggregation("Keyed Aggregation", [field](const T& a, const T& b) {
      T r = a;
      r.*field = a.*field + b.*field;
      return r;
    });
  }
  /// Rolling sum of the records themselves (T a number).
  DataStream<T> sum() const {
    return aggregation("Keyed Aggregation", [](const T& a, const T& b) { return static_cast<T>(a + b); });
  }
  /// Rolling sum of tuple field I (Flink's sum(position)).
  template <size_t I>
  DataStream<T> sum() const {
    return aggregation("Keyed Aggregation", [](const T& a, const T& b) {
      T r = a;
      std::get<I>(r) = std::get<I>(a) + std::get<I>(b);
      return r;
    });
  }
  /// Rolling minimum of a field; other fields from the key's first record (Flink's min(field)).
  template <typename Field>
    requires std::is_member_object_pointer_v<Field>
  DataStream<T> min(Field field) const {
    return aggregation("Keyed Aggregation", [field](const T& a, const T& b) {
      T r = a;
      if (b.*field < a.*field) r.*field = b.*field;
      return r;
    });
  }
  /// Rolling maximum of a field; other fields from the key's first record (Flink's max(field)).
  template <typename Field>
    requires std::is_member_object_pointer_v<Field>
  DataStream<T> max(Field field) const {
    return aggregation("Keyed Aggregation", [field](const T& a, const T& b) {
      T r = a;
      if (a.*field < b.*field) r.*field = b.*field;
      return r;
    });
  }
  /// The whole record with the smallest field (the earlier one on ties; Flink's minBy).
  template <typename Field>
    requires std::is_member_object_pointer_v<Field>
  DataStream<T> minBy(Field field) const {
    return aggregation("Keyed Aggregation", [field](const T& a, const T& b) { return b.*field < a.*field ? b : a; });
  }
  /// The whole record with the largest field (the earlier one on ties; Flink's maxBy).
  template <typename Field>
    requires std::is_member_object_pointer_v<Field>
  DataStream<T> maxBy(Field field) const {
    return aggregation("Keyed Aggregation", [field](const T& a, const T& b) { return a.*field < b.*field ? b : a; });
  }

  /// A KeyedProcessFunction<K, T, O> subclass (copied per subtask): keyed ValueState, event- and
  /// processing-time timers, side outputs.
  template <typename F>
  DataStream<typename F::OutputType> process(F fn) const {
    static_assert(std::is_base_of_v<KeyedProcessFunction<K, T, typename F::OutputType>, F>,
                  "keyBy(...).process takes a KeyedProcessFunction<K, T, O> with the stream's key type");
    return this->template transform<typename F::OutputType>(
        "KeyedProcess", sorted(detail::makeFactory<runtime::KeyedProcessOperator<KeySelector, F>>(
                            false, graph::ChainingStrategy::kAlways, key_selector_, fn, this->env_->scopeSlot())));
  }

  /// Windows per key (TumblingEventTimeWindows::of(...), SlidingEventTimeWindows::of(...), ...).
  WindowedStream<K, T> window(const WindowAssigner& assigner) const;

 private:
  template <typename F>
  DataStream<T> aggregation(const std::string& name, F fn) const {
    return this->template transform<T>(
        name, sorted(detail::makeFactory<runtime::KeyedReduceOperator<K, T, KeySelector, F>>(
                  false, graph::ChainingStrategy::kAlways, key_selector_, fn, this->env_->isBatchMode(),
                  this->env_->scopeSlot())));
  }

 public:
  /// `factory` with its input sorted by this stream's key in BATCH mode and during backlog (FLIP-327's
  /// sorted inputs for keyed one-input operators).
  std::shared_ptr<runtime::ObjectOperatorFactory> sorted(std::shared_ptr<runtime::ObjectOperatorFactory> factory) const {
    factory->setKeyedInputSorter([ks = key_selector_](const runtime::sort::SorterOptions& options, int32_t max_parallelism) {
      return std::unique_ptr<runtime::KeyedInputSorter>(
          std::make_unique<runtime::ObjectKeyedInputSorter<T, K, KeySelector>>(ks, options, max_parallelism));
    });
    return factory;
  }

 private:

  KeySelector key_selector_;
};

/// A keyed stream cut into windows; reduce / aggregate / process produce one stream of results.
template <typename K, typename T>
class WindowedStream {
 public:
  WindowedStream(KeyedStream<K, T> input, WindowAssigner assigner) : input_(std::move(input)), assigner_(assigner) {}

  /// Keeps windows open `ms` after their end for late elements (each late element fires the window again).
  WindowedStream& allowedLateness(int64_t ms) {
    if (ms < 0) throw UserError(fmt::format("The allowed lateness cannot be negative, got {} ms", ms));
    lateness_ = ms;
    return *this;
  }
  template <typename Rep, typename Period>
  WindowedStream& allowedLateness(std::chrono::duration<Rep, Period> d) {
    return allowedLateness(toMillis(d));
  }
  /// Elements too late for every window go to side output `tag` (read with getSideOutput on the result).
  WindowedStream& sideOutputLateData(const OutputTag<T>& tag) {
    late_tag_ = tag;
    return *this;
  }

  /// Incremental reduce per window: `fn` is `T(const T&, const T&)` or a ReduceFunction<T>.
  template <typename F>
  DataStream<T> reduce(F fn) const {
    return build<std::optional<T>, T>("Reduce", [fn]() {
      auto f = std::make_shared<F>(fn);
      runtime::WindowFunctions<K, T, std::optional<T>, T> w;
      w.add = [f](std::optional<T>& acc, const T& v) { acc = acc ? runtime::invokeReduce(*f, *acc, v) : v; };
      w.emit = [](const K&, const TimeWindow&, std::optional<T>& acc, runtime::WindowContext<TimeWindow>&,
                  Collector<T>& out) {
        if (acc) out.collect(*acc);
      };
      return w;
    });
  }
  /// Incremental aggregation per window with an AggregateFunction<T, ACC, OUT> subclass.
  template <typename A>
  DataStream<typename A::OutputType> aggregate(A agg) const {
    using ACC = typename A::AccumulatorType;
    using OUT = typename A::OutputType;
    return build<ACC, OUT>("Aggregate", [agg]() {
      auto a = std::make_shared<A>(agg);
      runtime::WindowFunctions<K, T, ACC, OUT> w;
      w.create = [a] { return a->createAccumulator(); };
      w.add = [a](ACC& acc, const T& v) { acc = a->add(v, std::move(acc)); };
      w.emit = [a](const K&, const TimeWindow&, ACC& acc, runtime::WindowContext<TimeWindow>&, Collector<OUT>& out) {
        out.collect(a->getResult(acc));
      };
      return w;
    });
  }
  /// Aggregation, then a ProcessWindowFunction<OUT_A, O, K> that sees the one aggregated value and the window.
  template <typename A, typename P>
  DataStream<typename P::OutputType> aggregate(A agg, P pwf) const {
    using ACC = typename A::AccumulatorType;
    using MID = typename A::OutputType;
    using OUT = typename P::OutputType;
    return build<ACC, OUT>("Aggregate", [agg, pwf]() {
      auto a = std::make_shared<A>(agg);
      auto p = std::make_shared<P>(pwf);
      runtime::WindowFunctions<K, T, ACC, OUT> w;
      w.create = [a] { return a->createAccumulator(); };
      w.add = [a](ACC& acc, const T& v) { acc = a->add(v, std::move(acc)); };
      w.emit = [a, p](const K& key, const TimeWindow&, ACC& acc, runtime::WindowContext<TimeWindow>& ctx,
                      Collector<OUT>& out) {
        const std::vector<MID> one{a->getResult(acc)};
        p->process(key, ctx, one, out);
      };
      w.open = [p](RuntimeContext& rc) {
        p->setRuntimeContext(&rc);
        p->open();
      };
      w.close = [p] { p->close(); };
      return w;
    });
  }
  /// All elements of a key's window at once: a ProcessWindowFunction<T, O, K> subclass.
  template <typename P>
  DataStream<typename P::OutputType> process(P pwf) const {
    using OUT = typename P::OutputType;
    static_assert(std::is_base_of_v<ProcessWindowFunction<T, OUT, K, TimeWindow>, P>,
                  "window(...).process takes a ProcessWindowFunction<T, O, K>");
    return build<std::vector<T>, OUT>("Process", [pwf]() {
      auto p = std::make_shared<P>(pwf);
      runtime::WindowFunctions<K, T, std::vector<T>, OUT> w;
      w.add = [](std::vector<T>& acc, const T& v) { acc.push_back(v); };
      w.emit = [p](const K& key, const TimeWindow&, std::vector<T>& acc, runtime::WindowContext<TimeWindow>& ctx,
                   Collector<OUT>& out) { p->process(key, ctx, acc, out); };
      w.open = [p](RuntimeContext& rc) {
        p->setRuntimeContext(&rc);
        p->open();
      };
      w.close = [p] { p->close(); };
      return w;
    });
  }

 private:
  template <typename ACC, typename OUT, typename MakeFns>
  DataStream<OUT> build(const std::string& fn_name, MakeFns make) const {
    using KS = typename KeyedStream<K, T>::KeySelector;
    const std::string name = fmt::format("Window({}, {}, {})", describeWindowAssigner(assigner_),
                                         assigner_.event_time ? "EventTimeTrigger" : "ProcessingTimeTrigger", fn_name);
    auto slot = input_.getExecutionEnvironment().scopeSlot();
    auto factory = std::make_shared<runtime::ObjectOperatorFactory>(
        [ks = input_.getKeySelector(), assigner = assigner_, lateness = lateness_, late = late_tag_, make,
         slot]() mutable -> std::unique_ptr<runtime::StreamOperator> {
          return std::make_unique<runtime::WindowOperator<K, T, ACC, OUT, KS>>(ks, assigner, lateness, make(), late,
                                                                               slot);
        },
        false, graph::ChainingStrategy::kAlways);
    // Event-time windows take a sorted input (the held watermark fires them after the flush); processing-time
    // ones are never sorted, as a record's window is the time it arrives.
    if (assigner_.event_time) input_.sorted(factory);
    return input_.template transform<OUT>(name, std::move(factory));
  }

  KeyedStream<K, T> input_;
  WindowAssigner assigner_;
  int64_t lateness_ = 0;
  std::optional<OutputTag<T>> late_tag_;
};

template <typename K, typename T>
WindowedStream<K, T> KeyedStream<K, T>::window(const WindowAssigner& assigner) const {
  return WindowedStream<K, T>(*this, assigner);
}

}  // namespace sluice::api
