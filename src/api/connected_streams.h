#pragma once
/// ConnectedStreams<A, B>: two streams processed by one two-input operator (Flink's ConnectedStreams),
/// optionally keyed on both sides so the operator shares keyed state and timers between its inputs.
/// Include "api/datastream.h" for the whole API.

#include <functional>
#include <string>
#include <type_traits>

#include "api/data_stream.h"
#include "runtime/operators/keyed_input_sorter.h"

namespace sluice::api {

namespace detail {

/// A CoMapFunction from two callables.
template <typename A, typename B, typename F1, typename F2>
struct LambdaCoMap {
  using OutputType = std::decay_t<std::invoke_result_t<F1&, const A&>>;
  F1 f1;
  F2 f2;
  OutputType map1(const A& v) { return f1(v); }
  OutputType map2(const B& v) { return f2(v); }
};

/// Adds a two-input operator reading `a` (input 1) and `b` (input 2).
template <typename O, typename A, typename B>
DataStream<O> twoInput(const std::string& name, std::shared_ptr<runtime::ObjectOperatorFactory> factory,
                       const DataStream<A>& a, const DataStream<B>& b) {
  for (const auto& [node, tag] : a.sideTags()) factory->setInputTag(node, tag);
  for (const auto& [node, tag] : b.sideTags()) factory->setInputTag(node, tag);
  factory->setNumFirstInputEdges(countProducers(a.getTransformation()));
  StreamExecutionEnvironment& env = a.getExecutionEnvironment();
  auto t = env.newTransformation(graph::TransformationKind::kOneInput, name, {a.getTransformation(), b.getTransformation()});
  t->factory = std::move(factory);
  return DataStream<O>(&env, t);
}

}  // namespace detail

/// Connected streams keyed on both sides by selectors returning the same key type K.
template <typename K, typename A, typename B>
class KeyedConnectedStreams {
 public:
  using KS1 = std::function<K(const A&)>;
  using KS2 = std::function<K(const B&)>;
  KeyedConnectedStreams(DataStream<A> a, DataStream<B> b, KS1 ks1, KS2 ks2)
      : first_(std::move(a)), second_(std::move(b)), ks1_(std::move(ks1)), ks2_(std::move(ks2)) {}

  /// A KeyedCoProcessFunction<K, A, B, O> subclass: keyed state and timers shared by both inputs. In BATCH
  /// mode and during backlog (FLIP-327 mixed mode) both inputs are sorted by key and merged, so the
  /// function sees each key's records of both inputs together (Flink's MultiInputSortingDataInput; ties
  /// of a key by timestamp, then the first input first).
  template <typename F>
  DataStream<typename F::OutputType> process(F fn) const {
    static_assert(std::is_base_of_v<KeyedCoProcessFunction<K, A, B, typename F::OutputType>, F>,
                  "keyed connected streams take a KeyedCoProcessFunction<K, A, B, O>");
    auto& env = first_.getExecutionEnvironment();
    auto factory = detail::makeFactory<runtime::KeyedCoProcessOperator<KS1, KS2, F>>(
        false, graph::ChainingStrategy::kAlways, ks1_, ks2_, fn, env.scopeSlot());
    factory->setKeyedInputSorter(
        [ks = ks1_](const runtime::sort::SorterOptions& options, int32_t max_parallelism) {
          return std::unique_ptr<runtime::KeyedInputSorter>(
              std::make_unique<runtime::ObjectKeyedInputSorter<A, K, KS1>>(ks, options, max_parallelism));
        },
        0);
    factory->setKeyedInputSorter(
        [ks = ks2_](const runtime::sort::SorterOptions& options, int32_t max_parallelism) {
          return std::unique_ptr<runtime::KeyedInputSorter>(
              std::make_unique<runtime::ObjectKeyedInputSorter<B, K, KS2>>(ks, options, max_parallelism));
        },
        1);
    return detail::twoInput<typename F::OutputType>("Co-Keyed-Process", std::move(factory), first_, second_);
  }
  /// A CoMapFunction over the key-partitioned inputs.
  template <typename F>
  DataStream<typename F::OutputType> map(F fn) const {
    using O = typename F::OutputType;
    auto& env = first_.getExecutionEnvironment();
    return detail::twoInput<O>("Co-Map",
                               detail::makeFactory<runtime::CoMapOperator<A, B, O, F>>(
                                   false, graph::ChainingStrategy::kAlways, fn, env.scopeSlot()),
                               first_, second_);
  }

 private:
  DataStream<A> first_;
  DataStream<B> second_;
  KS1 ks1_;
  KS2 ks2_;
};

/// Two streams for one two-input operator.
template <typename A, typename B>
class ConnectedStreams {
 public:
  ConnectedStreams(DataStream<A> a, DataStream<B> b) : first_(std::move(a)), second_(std::move(b)) {}

  const DataStream<A>& getFirstInput() const { return first_; }
  const DataStream<B>& getSecondInput() const { return second_; }

  /// A CoMapFunction<A, B, O> subclass (or any type with map1 / map2 and OutputType).
  template <typename F>
  DataStream<typename F::OutputType> map(F fn) const {
    using O = typename F::OutputType;
    auto& env = first_.getExecutionEnvironment();
    return detail::twoInput<O>("Co-Map",
                               detail::makeFactory<runtime::CoMapOperator<A, B, O, F>>(
                                   false, graph::ChainingStrategy::kAlways, fn, env.scopeSlot()),
                               first_, second_);
  }
  /// map1 / map2 as two callables returning the same type.
  template <typename F1, typename F2>
  auto map(F1 f1, F2 f2) const {
    return map(detail::LambdaCoMap<A, B, F1, F2>{std::move(f1), std::move(f2)});
  }
  /// A CoProcessFunction<A, B, O> subclass (timestamps, side outputs; no timers).
  template <typename F>
  DataStream<typename F::OutputType> process(F fn) const {
    static_assert(std::is_base_of_v<CoProcessFunction<A, B, typename F::OutputType>, F>,
                  "connect(...).process takes a CoProcessFunction<A, B, O>; key both sides for a KeyedCoProcessFunction");
    auto& env = first_.getExecutionEnvironment();
    return detail::twoInput<typename F::OutputType>(
        "Co-Process",
        detail::makeFactory<runtime::CoProcessOperator<F>>(false, graph::ChainingStrategy::kAlways, fn, env.scopeSlot()),
        first_, second_);
  }
  /// Keys both inputs (hash partitioning on both sides); the selectors must return the same key type.
  template <typename KS1, typename KS2>
  auto keyBy(KS1 ks1, KS2 ks2) const {
    using K = std::decay_t<std::invoke_result_t<KS1&, const A&>>;
    static_assert(std::is_same_v<K, std::decay_t<std::invoke_result_t<KS2&, const B&>>>,
                  "both key selectors of connected streams must return the same key type");
    auto a = first_.keyBy(ks1);
    auto b = second_.keyBy(ks2);
    return KeyedConnectedStreams<K, A, B>(a, b, ks1, ks2);
  }

 private:
  DataStream<A> first_;
  DataStream<B> second_;
};

}  // namespace sluice::api
