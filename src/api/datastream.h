#pragma once
/// The DataStream API in one include: StreamExecutionEnvironment, DataStream<T>, KeyedStream<K, T>,
/// WindowedStream<K, T>, ConnectedStreams<A, B>, the function interfaces, window assigners, watermark
/// strategies, FLIP-27 sources and sinks. See src/api/README.md for a walkthrough.

#include "api/connected_streams.h"
#include "api/data_stream.h"
#include "api/execution_environment.h"
#include "api/functions.h"
#include "api/keyed_stream.h"
#include "api/sources.h"

namespace sluice::api {

template <typename T>
template <typename KS>
auto DataStream<T>::keyBy(KS key_selector) const {
  using K = std::decay_t<std::invoke_result_t<KS&, const T&>>;
  graph::PartitionerSpec spec;
  spec.strategy = graph::ShipStrategy::kHash;
  spec.record_partitioner = std::make_shared<runtime::KeySelectorPartitioner<T, KS>>(key_selector);
  return KeyedStream<K, T>(partition(std::move(spec)), std::function<K(const T&)>(key_selector));
}

template <typename T>
template <typename U>
ConnectedStreams<T, U> DataStream<T>::connect(const DataStream<U>& other) const {
  return ConnectedStreams<T, U>(*this, other);
}

template <typename SourceT, typename Strategy>
DataStream<typename SourceT::OutputType> StreamExecutionEnvironment::fromSource(std::shared_ptr<SourceT> source,
                                                                                const Strategy& watermarks,
                                                                                const std::string& name) {
  using T = typename SourceT::OutputType;
  using SplitT = typename SourceT::SplitType;
  auto t = newTransformation(graph::TransformationKind::kSource, name, {});
  std::shared_ptr<const runtime::Source<T, SplitT>> base = source;
  const WatermarkStrategy<T> strategy = watermarks;
  t->factory = detail::makeFactory<runtime::SourceReaderOperator<T, SplitT>>(
      true, graph::ChainingStrategy::kHead, base, strategy, t->id, isBatchMode(), scope_slot_);
  return DataStream<T>(this, t);
}

template <typename T>
DataStream<T> StreamExecutionEnvironment::fromCollection(std::vector<T> values) {
  auto stream = fromSource(std::make_shared<CollectionSource<T>>(std::move(values)), WatermarkStrategy<T>::noWatermarks(),
                           "Collection Source");
  stream.getTransformation()->parallelism = 1;
  return DataStream<T>(this, stream.getTransformation(), {}, /*non_parallel=*/true);
}

template <typename T, typename... Ts>
DataStream<T> StreamExecutionEnvironment::fromElements(T first, Ts... rest) {
  std::vector<T> values;
  values.reserve(1 + sizeof...(Ts));
  values.push_back(std::move(first));
  (values.push_back(T(std::move(rest))), ...);
  return fromCollection(std::move(values));
}

}  // namespace sluice::api
