#pragma once
/// DataStream<T>: a stream of C++ records of type T (Flink's DataStream / SingleOutputStreamOperator).
/// Every operation adds a graph::Transformation whose factory creates the runtime operator; per-operator
/// settings (name, uid, parallelism, slot sharing group, chaining) change the transformation that
/// produced this stream. Include "api/datastream.h" for the whole API.

#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "api/execution_environment.h"
#include "api/functions.h"
#include "runtime/operators/object_operator_factory.h"

namespace sluice::api {

template <typename K, typename T>
class KeyedStream;
template <typename A, typename B>
class ConnectedStreams;

namespace detail {

/// Producer node id -> side output tag a consumer of this stream reads (0: main output).
using SideTags = std::map<int, int>;

/// Number of real (non-virtual) producers behind `t`, i.e. of head input edges it becomes.
inline int countProducers(const graph::TransformationPtr& t) {
  if (t->kind == graph::TransformationKind::kPartition) return countProducers(t->inputs[0]);
  if (t->kind == graph::TransformationKind::kUnion) {
    int n = 0;
    for (const auto& in : t->inputs) n += countProducers(in);
    return n;
  }
  return 1;
}

/// A factory for operator type Op built from copies of `args` (one operator per subtask).
template <typename Op, typename... Args>
std::shared_ptr<runtime::ObjectOperatorFactory> makeFactory(bool is_source, graph::ChainingStrategy strategy,
                                                            Args... args) {
  return std::make_shared<runtime::ObjectOperatorFactory>(
      [=]() -> std::unique_ptr<runtime::StreamOperator> { return std::make_unique<Op>(args...); }, is_source,
      strategy);
}

/// Tells the operator behind `t` that its output read through `tags` (main output when `t` has no
/// entry) holds records of type T, so the runtime can serialize them where they cross the network.
/// Partitions and unions are not operators: their inputs registered their types already.
template <typename T>
void registerOutputType(const graph::TransformationPtr& t, const SideTags& tags) {
  if (t->kind == graph::TransformationKind::kPartition || t->kind == graph::TransformationKind::kUnion) return;
  auto factory = std::dynamic_pointer_cast<const runtime::ObjectOperatorFactory>(t->factory);
  if (factory == nullptr) return;
  auto it = tags.find(t->id);
  // The API created the factory as a mutable ObjectOperatorFactory; the job is still being built.
  std::const_pointer_cast<runtime::ObjectOperatorFactory>(factory)->setOutputSerializer(
      it == tags.end() ? 0 : it->second, runtime::objectBatchSerializer<T>());
}

}  // namespace detail

/// Settings of the operator behind a stream or sink (Flink's SingleOutputStreamOperator / DataStreamSink).
template <typename Derived>
class OperatorSettings {
 public:
  /// The operator's name (shown in the plan and the task names).
  Derived& name(const std::string& n) {
    real("name")->name = name_prefix_ + n;
    return self();
  }
  /// A stable operator id (Flink's uid); also makes the vertex id deterministic.
  Derived& uid(const std::string& u) {
    real("uid")->uid = u;
    return self();
  }
  /// Longer text shown by explain.
  Derived& setDescription(const std::string& d) {
    real("setDescription")->description = d;
    return self();
  }
  /// The operator's parallelism (>= 1). Throws UserError on a non-parallel source (fromElements).
  Derived& setParallelism(int p) {
    auto t = real("setParallelism");
    if (p < 1) throw UserError(fmt::format("The parallelism of operator '{}' must be at least 1, got {}", t->name, p));
    if (non_parallel_ && p != 1) {
      throw UserError(fmt::format("The parallelism of non parallel operator '{}' must be 1, got {}", t->name, p));
    }
    t->parallelism = p;
    return self();
  }
  /// The operator's maximum parallelism (number of key groups of its keyed state).
  Derived& setMaxParallelism(int p) {
    auto t = real("setMaxParallelism");
    if (p < 1) throw UserError(fmt::format("The max parallelism of operator '{}' must be at least 1, got {}", t->name, p));
    t->max_parallelism = p;
    return self();
  }
  /// Puts the operator into slot sharing group `group` (Flink's slotSharingGroup).
  Derived& slotSharingGroup(const std::string& group) {
    real("slotSharingGroup")->slot_sharing_group = group;
    return self();
  }
  /// Chaining strategy NEVER: neither chained to its input nor to its output.
  Derived& disableChaining() {
    real("disableChaining")->chaining_strategy = graph::ChainingStrategy::kNever;
    return self();
  }
  /// Chaining strategy HEAD: starts a new chain (its successors may still chain to it).
  Derived& startNewChain() {
    real("startNewChain")->chaining_strategy = graph::ChainingStrategy::kHead;
    return self();
  }
  /// The transformation behind this stream.
  const graph::TransformationPtr& getTransformation() const { return transformation_; }
  /// The transformation id (the StreamNode id).
  int getId() const { return transformation_->id; }

 protected:
  OperatorSettings(StreamExecutionEnvironment* env, graph::TransformationPtr t, bool non_parallel = false)
      : env_(env), transformation_(std::move(t)), non_parallel_(non_parallel) {}

  const graph::TransformationPtr& real(const char* what) const {
    const auto k = transformation_->kind;
    if (k == graph::TransformationKind::kPartition || k == graph::TransformationKind::kUnion) {
      throw UserError(fmt::format("{}() cannot be set on a partitioning or union (it is not an operator)", what));
    }
    return transformation_;
  }
  Derived& self() { return static_cast<Derived&>(*this); }

  StreamExecutionEnvironment* env_;
  graph::TransformationPtr transformation_;
  bool non_parallel_;
  std::string name_prefix_;  ///< "Sink: " for sinks (Flink's sink node names)
};

/// The end of a stream: a sink's settings.
class DataStreamSink : public OperatorSettings<DataStreamSink> {
 public:
  DataStreamSink(StreamExecutionEnvironment* env, graph::TransformationPtr t) : OperatorSettings(env, std::move(t)) {
    name_prefix_ = "Sink: ";
  }
};

/// A stream of records of type T.
template <typename T>
class DataStream : public OperatorSettings<DataStream<T>> {
 public:
  using Type = T;

  /// Internal: a stream produced by `t` (consumers read the side outputs in `tags`).
  DataStream(StreamExecutionEnvironment* env, graph::TransformationPtr t, detail::SideTags tags = {},
             bool non_parallel = false)
      : OperatorSettings<DataStream<T>>(env, std::move(t), non_parallel), tags_(std::move(tags)) {
    detail::registerOutputType<T>(this->transformation_, tags_);
  }

  StreamExecutionEnvironment& getExecutionEnvironment() const { return *this->env_; }

  /// One output per record: `fn` is `O(const T&)` or a MapFunction<T, O>.
  template <typename F>
  auto map(F fn) const {
    using O = std::decay_t<decltype(runtime::invokeMap(std::declval<F&>(), std::declval<const T&>()))>;
    return transform<O>("Map", detail::makeFactory<runtime::MapOperator<T, O, F>>(false, graph::ChainingStrategy::kAlways,
                                                                              fn, this->env_->scopeSlot()));
  }
  /// Any number of outputs per record: `fn` is `void(const T&, Collector<O>&)` (give O explicitly:
  /// flatMap<O>(...)) or a FlatMapFunction<T, O>.
  template <typename O = void, typename F>
  auto flatMap(F fn) const {
    using Out = std::conditional_t<std::is_void_v<O>, typename std::conditional_t<std::is_void_v<O>, F, Identity<O>>::OutputType, O>;
    return transform<Out>("Flat Map", detail::makeFactory<runtime::FlatMapOperator<T, Out, F>>(
                                          false, graph::ChainingStrategy::kAlways, fn, this->env_->scopeSlot()));
  }
  /// Keeps the records for which `fn` (`bool(const T&)` or a FilterFunction<T>) is true.
  template <typename F>
  DataStream<T> filter(F fn) const {
    return transform<T>("Filter", detail::makeFactory<runtime::FilterOperator<T, F>>(
                                      false, graph::ChainingStrategy::kAlways, fn, this->env_->scopeSlot()));
  }
  /// A ProcessFunction<T, O> subclass (copied per subtask): timestamps and side outputs; no timers.
  template <typename F>
  DataStream<typename F::OutputType> process(F fn) const {
    static_assert(std::is_base_of_v<ProcessFunction<T, typename F::OutputType>, F>,
                  "process() on a DataStream takes a ProcessFunction<T, O>; use keyBy(...).process for keyed ones");
    return transform<typename F::OutputType>("Process", detail::makeFactory<runtime::ProcessOperator<F>>(
                                                            false, graph::ChainingStrategy::kAlways, fn,
                                                            this->env_->scopeSlot()));
  }
  /// Stamps records with event timestamps and emits watermarks (Flink's assignTimestampsAndWatermarks).
  DataStream<T> assignTimestampsAndWatermarks(const WatermarkStrategy<T>& strategy) const {
    return transform<T>("Timestamps/Watermarks",
                        detail::makeFactory<runtime::TimestampsAndWatermarksOperator<T>>(
                            false, graph::ChainingStrategy::kAlways, strategy, this->env_->isBatchMode()));
  }

  /// Partitions by the key `key_selector(record)` returns (any type with stable hashing: numbers, strings,
  /// pairs, tuples, SLUICE_TYPE structs).
  template <typename KS>
  auto keyBy(KS key_selector) const;

  /// Merges streams of the same type (Flink's union; `union` is a C++ keyword).
  template <typename... Streams>
  DataStream<T> union_(const Streams&... others) const {
    std::vector<graph::TransformationPtr> inputs{this->transformation_};
    detail::SideTags tags = tags_;
    (addUnionInput(others, inputs, tags), ...);
    auto u = this->env_->newTransformation(graph::TransformationKind::kUnion, "Union", std::move(inputs));
    return DataStream<T>(this->env_, u, std::move(tags));
  }
  /// Two streams processed together by a CoMap / CoProcess function.
  template <typename U>
  ConnectedStreams<T, U> connect(const DataStream<U>& other) const;
  /// The side output `tag` of the operator that produced this stream.
  template <typename X>
  DataStream<X> getSideOutput(const OutputTag<X>& tag) const {
    detail::SideTags tags{{this->transformation_->id, tag.tag()}};
    return DataStream<X>(this->env_, this->transformation_, std::move(tags));
  }

  /// Same subtask downstream (FORWARD; parallelism must match).
  DataStream<T> forward() const { return partition(graph::ShipStrategy::kForward); }
  /// Round-robin over all downstream subtasks, record by record (REBALANCE).
  DataStream<T> rebalance() const { return partition(graph::ShipStrategy::kRebalance); }
  /// Round-robin over a subset of downstream subtasks (RESCALE, pointwise).
  DataStream<T> rescale() const { return partition(graph::ShipStrategy::kRescale); }
  /// A random downstream subtask per record (SHUFFLE).
  DataStream<T> shuffle() const { return partition(graph::ShipStrategy::kShuffle); }
  /// Every record to every downstream subtask (BROADCAST).
  DataStream<T> broadcast() const { return partition(graph::ShipStrategy::kBroadcast); }
  /// Everything to downstream subtask 0 (GLOBAL).
  DataStream<T> global() const { return partition(graph::ShipStrategy::kGlobal); }
  /// CUSTOM: `partitioner(key, num_partitions)` returns the subtask for `key_selector(record)`.
  template <typename P, typename KS>
  DataStream<T> partitionCustom(P partitioner, KS key_selector) const {
    graph::PartitionerSpec spec;
    spec.strategy = graph::ShipStrategy::kCustom;
    spec.record_partitioner = std::make_shared<runtime::CustomPartitioner<T, KS, P>>(key_selector, partitioner);
    return partition(std::move(spec));
  }

  /// Prints every record to stdout in Flink's print format ("N> record" when the sink's parallelism > 1).
  DataStreamSink print(const std::string& identifier = "") const {
    return sinkNamed(std::make_shared<PrintSink<T>>(identifier, false), "Print to Std. Out");
  }
  /// Like print, to stderr.
  DataStreamSink printToErr(const std::string& identifier = "") const {
    return sinkNamed(std::make_shared<PrintSink<T>>(identifier, true), "Print to Std. Err");
  }
  /// Writes to a Sink<T> (one SinkWriter per subtask).
  DataStreamSink sinkTo(std::shared_ptr<const Sink<T>> sink) const { return sinkNamed(std::move(sink), "Writer"); }
  /// Gathers every record into the returned CollectedValues (filled while the job runs).
  std::shared_ptr<CollectedValues<T>> collect(const std::string& name = "Collect Sink") const {
    auto values = std::make_shared<CollectedValues<T>>();
    addSink(name, detail::makeFactory<runtime::CollectSinkOperator<T>>(false, graph::ChainingStrategy::kAlways, values));
    return values;
  }
  /// Adds a collect sink, runs the job (env.execute) and returns the records (Flink's executeAndCollect).
  std::vector<T> executeAndCollect(const std::string& job_name = "") const {
    auto values = collect();
    this->env_->execute(job_name);
    return values->values();
  }

  /// Internal: the side tags consumers of this stream read.
  const detail::SideTags& sideTags() const { return tags_; }

  /// Internal: adds a one-input operator reading this stream.
  template <typename O>
  DataStream<O> transform(const std::string& name, std::shared_ptr<runtime::ObjectOperatorFactory> factory) const {
    for (const auto& [node, tag] : tags_) factory->setInputTag(node, tag);
    auto t = this->env_->newTransformation(graph::TransformationKind::kOneInput, name, {this->transformation_});
    t->factory = std::move(factory);
    return DataStream<O>(this->env_, t);
  }
  /// Internal: this stream behind a partitioner.
  DataStream<T> partition(graph::PartitionerSpec spec) const {
    auto t = this->env_->newTransformation(graph::TransformationKind::kPartition, graph::shipStrategyName(spec.strategy),
                                           {this->transformation_});
    t->partitioner = std::move(spec);
    return DataStream<T>(this->env_, t, tags_);
  }
  DataStream<T> partition(graph::ShipStrategy s) const {
    graph::PartitionerSpec spec;
    spec.strategy = s;
    return partition(std::move(spec));
  }

 private:
  template <typename O>
  struct Identity {
    using OutputType = O;
  };

  template <typename S>
  static void addUnionInput(const S& s, std::vector<graph::TransformationPtr>& inputs, detail::SideTags& tags) {
    static_assert(std::is_same_v<typename S::Type, T>, "union of streams of different types");
    inputs.push_back(s.getTransformation());
    for (const auto& [node, tag] : s.sideTags()) tags[node] = tag;
  }

  DataStreamSink addSink(const std::string& name, std::shared_ptr<runtime::ObjectOperatorFactory> factory) const {
    for (const auto& [node, tag] : tags_) factory->setInputTag(node, tag);
    auto t = this->env_->newTransformation(graph::TransformationKind::kSink, "Sink: " + name, {this->transformation_});
    t->factory = std::move(factory);
    this->env_->addSink(t);
    return DataStreamSink(this->env_, t);
  }
  DataStreamSink sinkNamed(std::shared_ptr<const Sink<T>> sink, const std::string& name) const {
    return addSink(name, detail::makeFactory<runtime::SinkWriterOperator<T>>(false, graph::ChainingStrategy::kAlways,
                                                                             std::move(sink)));
  }

  detail::SideTags tags_;
};

}  // namespace sluice::api
