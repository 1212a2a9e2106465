#pragma once
/// StreamGraph: one StreamNode per operator and StreamEdges carrying partitioner and exchange mode
/// (Flink's org.apache.flink.streaming.api.graph.StreamGraph), built from Transformations by
/// StreamGraphGenerator. Plain data, built on the client thread and read-only afterwards.

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "graph/transformation.h"

namespace sluice {
class Configuration;
}

namespace sluice::graph {

/// `execution.runtime-mode` (Flink's RuntimeExecutionMode). AUTOMATIC is treated as STREAMING: operator
/// factories do not tell whether their input is bounded.
enum class RuntimeMode { kStreaming, kBatch };

/// "STREAMING" or "BATCH".
const char* runtimeModeName(RuntimeMode m);

/// One operator of the job (Flink's StreamNode).
struct StreamNode {
  int id = 0;                        ///< the Transformation id
  std::string operator_name;         ///< sources carry Flink's "Source: " prefix
  std::string description;
  int parallelism = 1;               ///< resolved, >= 1
  int max_parallelism = 128;         ///< resolved, >= parallelism
  std::string uid;
  std::string slot_sharing_group;    ///< resolved: "default" when none was given
  ChainingStrategy chaining_strategy = ChainingStrategy::kAlways;  ///< the Transformation's, else the factory's
  bool is_source = false;            ///< the factory is a source (Flink's SourceOperatorFactory)
  std::shared_ptr<const OperatorFactory> factory;
  types::RowType output_type;
  std::vector<int> in_edges;         ///< indexes into StreamGraph::edges, in input order
  std::vector<int> out_edges;        ///< indexes into StreamGraph::edges, in creation order
};

/// A connection between two StreamNodes (Flink's StreamEdge).
struct StreamEdge {
  int source_id = 0;
  int target_id = 0;
  PartitionerSpec partitioner;
  ExchangeMode exchange_mode = ExchangeMode::kUndefined;
  int type_number = 0;               ///< input index of the target (0 for one-input operators and unions)
};

/// The operator graph of one job.
struct StreamGraph {
  std::string job_name;
  bool chaining_enabled = true;           ///< pipeline.operator-chaining.enabled
  /// pipeline.operator-chaining.chain-operators-with-different-max-parallelism
  bool chain_operators_with_different_max_parallelism = true;
  RuntimeMode runtime_mode = RuntimeMode::kStreaming;
  /// Flink's StreamGraph.isAllVerticesInSameSlotSharingGroupByDefault: true in STREAMING (one "default"
  /// group for the whole job), false in BATCH (one group per pipelined region; FLINK-14060).
  bool all_vertices_in_same_slot_sharing_group_by_default = true;
  /// FLIP-327 mixed mode: STREAMING with execution.checkpointing.interval-during-backlog = 0, so keyed
  /// operators sort their input while it is backlog.
  bool backlog_sorting = false;
  std::vector<StreamNode> nodes;          ///< sorted by id
  std::vector<StreamEdge> edges;

  /// The node with Transformation id `id`; throws InternalError when absent.
  const StreamNode& node(int id) const;
  /// Index of node `id` in `nodes`, or -1.
  int indexOf(int id) const;
  /// Rebuilds the id -> index map; call after changing `nodes`.
  void reindex();

 private:
  std::unordered_map<int, int> index_;
};

/// Flink's KeyGroupRangeAssignment.computeDefaultMaxParallelism: roundUpToPowerOfTwo(p + p / 2)
/// clamped to [128, 32768].
int computeDefaultMaxParallelism(int parallelism);

/// Translates Transformations into a StreamGraph (Flink's StreamGraphGenerator).
///
/// Rules: `execution.runtime-mode` BATCH makes every kUndefined edge blocking in the JobGraph and gives each
/// pipelined region its own default slot sharing group (Flink's configureStreamGraphBatch);
/// parallelism -1 -> `parallelism.default`; max parallelism -1 -> `pipeline.max-parallelism`,
/// and when that is -1 too, computeDefaultMaxParallelism(parallelism). Virtual kPartition sets the
/// partitioner of the edges to its consumer; kUnion hands all its inputs to the consumer in input order.
/// An edge without partitioner is FORWARD when both ends have the same parallelism, else REBALANCE.
/// Throws UserError for FORWARD between different parallelisms and for parallelism > max parallelism;
/// ConfigError for a parallelism < 1.
class StreamGraphGenerator {
 public:
  /// `config` must outlive the call only.
  explicit StreamGraphGenerator(const Configuration& config) : config_(config) {}

  /// Builds the graph of everything reachable from `transformations` (usually the sinks).
  /// Node ids are the Transformation ids; nodes are ordered by id. `job_name` defaults to
  /// `pipeline.name`, then to "insert-into_job".
  StreamGraph generate(const std::vector<TransformationPtr>& transformations,
                       const std::string& job_name = "") const;

 private:
  const Configuration& config_;
};

}  // namespace sluice::graph
