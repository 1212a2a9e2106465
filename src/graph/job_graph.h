#pragma once
/// JobGraph: chains of operators become JobVertices, other edges become JobEdges (Flink's JobGraph as
/// produced by StreamingJobGraphGenerator). Plain data, built on the client thread, then read-only;
/// the runtime instantiates operators from `ChainedOperator::factory`.

#include <memory>
#include <string>
#include <vector>

#include "graph/stream_graph.h"

namespace sluice::graph {

/// One operator inside a JobVertex. The operators of a vertex form a tree rooted at the head
/// (index 0); children always come after their parent.
struct ChainedOperator {
  int node_id = 0;                              ///< StreamNode / Transformation id
  std::string name;
  std::string description;
  std::shared_ptr<const OperatorFactory> factory;
  types::RowType output_type;
  std::vector<int> chained_outputs;             ///< indexes into JobVertex::operators
  std::vector<int> network_outputs;             ///< indexes into JobGraph::edges
};

/// A task: a chain of operators run by one thread per subtask (Flink's JobVertex).
struct JobVertex {
  std::string id;                               ///< 32 hex digits, deterministic (uid or graph position)
  std::string name;                             ///< Flink's chained name: "Source: a -> Calc -> (B, C)"
  std::string description;
  int parallelism = 1;
  int max_parallelism = 128;
  std::string slot_sharing_group = "default";
  bool is_source = false;
  std::vector<ChainedOperator> operators;       ///< head first
  std::vector<int> inputs;                      ///< indexes into JobGraph::edges, in the head's input order
  std::vector<int> outputs;                     ///< indexes into JobGraph::edges
};

/// A data exchange between two vertices (Flink's JobEdge + IntermediateDataSet).
struct JobEdge {
  int source_vertex = 0;                        ///< index into JobGraph::vertices
  int target_vertex = 0;
  int source_operator = 0;                      ///< index into the source vertex's operators
  int source_node_id = 0;
  int target_node_id = 0;
  PartitionerSpec partitioner;
  ExchangeMode exchange_mode = ExchangeMode::kPipelined;
};

/// The graph the cluster executes.
struct JobGraph {
  std::string job_id;                           ///< 32 hex digits, deterministic
  std::string name;
  std::vector<JobVertex> vertices;              ///< topologically sorted
  std::vector<JobEdge> edges;
};

/// True when the edge connects subtasks pointwise (FORWARD, RESCALE; Flink's POINTWISE distribution
/// pattern) rather than all-to-all.
bool isPointwise(ShipStrategy s);

/// Consumer subtasks that producer subtask `producer` of `edge` sends to, ascending. All consumers for
/// all-to-all edges; for pointwise edges producer i feeds the consumers j with i == j*P/C (P > C
/// reversed: consumer i*C/P), P and C being the producer and consumer parallelism.
std::vector<int> connectedConsumers(ShipStrategy s, int producer_parallelism, int consumer_parallelism,
                                    int producer);
/// Producer subtasks whose data consumer subtask `consumer` receives, ascending (inverse of the above).
std::vector<int> connectedProducers(ShipStrategy s, int producer_parallelism, int consumer_parallelism,
                                    int consumer);

/// Translates a StreamGraph into a JobGraph by chaining operators (Flink's StreamingJobGraphGenerator).
///
/// An edge is chained when all hold (Flink's isChainable): the target has exactly one input edge; both
/// ends are in the same slot sharing group; the target's strategy is ALWAYS and the source's is ALWAYS,
/// HEAD or HEAD_WITH_SOURCES; the partitioner is FORWARD; the exchange is PIPELINED; both have the same
/// parallelism; chaining is enabled.
class StreamingJobGraphGenerator {
 public:
  /// Builds the JobGraph. Throws InternalError on a malformed StreamGraph (e.g. a cycle).
  static JobGraph createJobGraph(const StreamGraph& graph);
  /// Whether `edge` of `graph` would be chained.
  static bool isChainable(const StreamGraph& graph, const StreamEdge& edge);
};

/// Convenience: Transformations -> StreamGraph -> JobGraph with `config`.
JobGraph buildJobGraph(const std::vector<TransformationPtr>& transformations, const Configuration& config,
                       const std::string& job_name = "");

}  // namespace sluice::graph
