#include "graph/stream_graph.h"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_set>

#include "common/config.h"
#include "common/error.h"

namespace sluice::graph {

const StreamNode& StreamGraph::node(int id) const {
  const int i = indexOf(id);
  SLUICE_CHECK(i >= 0, "no StreamNode with id {}", id);
  return nodes[static_cast<size_t>(i)];
}

int StreamGraph::indexOf(int id) const {
  if (index_.size() != nodes.size()) const_cast<StreamGraph*>(this)->reindex();
  auto it = index_.find(id);
  return it == index_.end() ? -1 : it->second;
}

void StreamGraph::reindex() {
  index_.clear();
  for (size_t i = 0; i < nodes.size(); ++i) index_[nodes[i].id] = static_cast<int>(i);
}

const char* runtimeModeName(RuntimeMode m) { return m == RuntimeMode::kBatch ? "BATCH" : "STREAMING"; }

int computeDefaultMaxParallelism(int parallelism) {
  // Flink: MathUtils.roundUpToPowerOfTwo(p + p / 2), at least 128 (DEFAULT_LOWER_BOUND), at most 32768.
  int64_t x = static_cast<int64_t>(parallelism) + parallelism / 2;
  int64_t pow2 = 1;
  while (pow2 < x) pow2 <<= 1;
  return static_cast<int>(std::min<int64_t>(std::max<int64_t>(pow2, 128), 32768));
}

namespace {

void collect(const TransformationPtr& t, std::map<int, TransformationPtr>& out) {
  SLUICE_CHECK(t != nullptr, "null transformation");
  auto it = out.find(t->id);
  if (it != out.end()) {
    SLUICE_CHECK(it->second.get() == t.get(), "two transformations share id {}", t->id);
    return;
  }
  out.emplace(t->id, t);
  for (const auto& in : t->inputs) collect(in, out);
}

bool isVirtual(TransformationKind k) {
  return k == TransformationKind::kPartition || k == TransformationKind::kUnion;
}

struct ResolvedInput {
  int node_id;
  std::optional<PartitionerSpec> partitioner;
  ExchangeMode exchange_mode;
};

// Walks through virtual nodes: a partition sets the partitioner (the one nearest the consumer wins, as in
// Flink where the consumer-side virtual partition node is resolved last), a union expands in input order.
// The exchange mode is taken from every partition on the way, so the one nearest the producer wins, as
// in Flink's StreamGraph.addEdgeInternal.
void resolveInputs(const TransformationPtr& t, std::optional<PartitionerSpec> partitioner, ExchangeMode mode,
                   std::vector<ResolvedInput>& out) {
  switch (t->kind) {
    case TransformationKind::kPartition:
      SLUICE_CHECK(t->inputs.size() == 1, "partition transformation {} needs exactly one input", t->id);
      resolveInputs(t->inputs[0], partitioner ? partitioner : std::optional<PartitionerSpec>(t->partitioner),
                    t->exchange_mode, out);
      return;
    case TransformationKind::kUnion:
      for (const auto& in : t->inputs) resolveInputs(in, partitioner, mode, out);
      return;
    default:
      out.push_back({t->id, std::move(partitioner), mode});
  }
}

}  // namespace

StreamGraph StreamGraphGenerator::generate(const std::vector<TransformationPtr>& transformations,
                                           const std::string& job_name) const {
  std::map<int, TransformationPtr> all;
  for (const auto& t : transformations) collect(t, all);

  const int default_parallelism = config_.get(options::kParallelismDefault);
  if (default_parallelism < 1) {
    throw ConfigError(fmt::format("Invalid value '{}' for configuration key '{}': must be at least 1",
                                  default_parallelism, options::kParallelismDefault.key()));
  }
  const int configured_max = config_.get(options::kMaxParallelism);

  StreamGraph graph;
  graph.job_name = job_name;
  if (graph.job_name.empty()) graph.job_name = config_.get(options::kPipelineName);
  if (graph.job_name.empty()) graph.job_name = "insert-into_job";
  graph.chaining_enabled = config_.get(options::kOperatorChaining);
  graph.chain_operators_with_different_max_parallelism =
      config_.get(options::kChainOperatorsWithDifferentMaxParallelism);
  graph.runtime_mode =
      config_.get(options::kRuntimeMode) == "BATCH" ? RuntimeMode::kBatch : RuntimeMode::kStreaming;
  graph.all_vertices_in_same_slot_sharing_group_by_default = graph.runtime_mode == RuntimeMode::kStreaming;
  graph.backlog_sorting = graph.runtime_mode == RuntimeMode::kStreaming &&
                          config_.getOptional(options::kCheckpointingIntervalDuringBacklog).value_or(-1) == 0;

  for (const auto& [id, t] : all) {
    if (isVirtual(t->kind)) continue;
    SLUICE_CHECK(t->factory != nullptr, "transformation {} ({}) has no operator factory", id, t->name);
    StreamNode n;
    n.id = id;
    n.is_source = t->kind == TransformationKind::kSource || t->factory->isSource();
    n.operator_name = t->name;
    // Flink's SourceTransformationTranslator names the node "Source: <name>".
    if (n.is_source && n.operator_name.rfind("Source: ", 0) != 0) n.operator_name = "Source: " + n.operator_name;
    n.description = t->description.empty() ? t->name : t->description;
    n.parallelism = t->parallelism > 0 ? t->parallelism : default_parallelism;
    if (t->parallelism == 0 || t->parallelism < -1) {
      throw ConfigError(fmt::format("Invalid parallelism {} of operator '{}': must be at least 1 or -1 (default)",
                                    t->parallelism, t->name));
    }
    if (t->max_parallelism > 0) n.max_parallelism = t->max_parallelism;
    else if (configured_max > 0) n.max_parallelism = configured_max;
    else n.max_parallelism = computeDefaultMaxParallelism(n.parallelism);
    if (n.parallelism > n.max_parallelism) {
      throw UserError(fmt::format(
          "The parallelism {} of operator '{}' is larger than its maximum parallelism {} (pipeline.max-parallelism)",
          n.parallelism, t->name, n.max_parallelism));
    }
    n.uid = t->uid;
    n.slot_sharing_group = t->slot_sharing_group.empty() ? "default" : t->slot_sharing_group;
    n.chaining_strategy = t->chaining_strategy ? *t->chaining_strategy : t->factory->chainingStrategy();
    n.factory = t->factory;
    n.output_type = t->output_type;
    graph.nodes.push_back(std::move(n));
  }
  graph.reindex();

  for (const auto& [id, t] : all) {
    if (isVirtual(t->kind)) continue;
    if (t->kind == TransformationKind::kSource) {
      SLUICE_CHECK(t->inputs.empty(), "source transformation {} has inputs", id);
      continue;
    }
    std::vector<ResolvedInput> inputs;
    for (const auto& in : t->inputs) resolveInputs(in, std::nullopt, ExchangeMode::kUndefined, inputs);
    for (const auto& in : inputs) {
      const int src_idx = graph.indexOf(in.node_id);
      const int dst_idx = graph.indexOf(id);
      StreamNode& src = graph.nodes[static_cast<size_t>(src_idx)];
      StreamNode& dst = graph.nodes[static_cast<size_t>(dst_idx)];
      StreamEdge e;
      e.source_id = in.node_id;
      e.target_id = id;
      e.exchange_mode = in.exchange_mode;
      if (in.partitioner) {
        e.partitioner = *in.partitioner;
      } else {
        e.partitioner.strategy =
            src.parallelism == dst.parallelism ? ShipStrategy::kForward : ShipStrategy::kRebalance;
      }
      if (e.partitioner.strategy == ShipStrategy::kForward && src.parallelism != dst.parallelism) {
        throw UserError(fmt::format(
            "Forward partitioning does not allow change of parallelism. Upstream operation: {} parallelism: {}, "
            "downstream operation: {} parallelism: {}. Use another partitioning strategy, such as rebalance, "
            "shuffle, broadcast or global.",
            src.operator_name, src.parallelism, dst.operator_name, dst.parallelism));
      }
      SLUICE_CHECK(e.partitioner.strategy != ShipStrategy::kHash || !e.partitioner.key_columns.empty() ||
                       e.partitioner.record_partitioner != nullptr,
                   "HASH partitioner into '{}' has no key columns", dst.operator_name);
      const int edge_index = static_cast<int>(graph.edges.size());
      graph.edges.push_back(std::move(e));
      src.out_edges.push_back(edge_index);
      dst.in_edges.push_back(edge_index);
    }
  }
  // An operator without a named slot sharing group takes its inputs' group when they all agree, else
  // "default" (Flink's StreamGraphGenerator.determineSlotSharingGroup). Inputs have smaller ids.
  for (auto& n : graph.nodes) {
    if (!all.at(n.id)->slot_sharing_group.empty() || n.in_edges.empty()) continue;
    std::optional<std::string> inherited;
    for (int e : n.in_edges) {
      const std::string& g = graph.node(graph.edges[static_cast<size_t>(e)].source_id).slot_sharing_group;
      if (!inherited) inherited = g;
      else if (*inherited != g) inherited = "default";
    }
    n.slot_sharing_group = *inherited;
  }
  return graph;
}

}  // namespace sluice::graph
