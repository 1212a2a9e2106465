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
  /// Identity of the operator's state in checkpoints and savepoints (Flink's OperatorID): the user's uid,
  /// else 16 hex digits of a hash of its name, its position in the graph and its inputs (not of chaining or
  /// parallelism, so a savepoint restores at another parallelism).
  std::string uid;
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
  /// The effective slot sharing group (Flink's setSlotSharing, FLINK-14060): a user-named group is kept
  /// (it may span regions); "default" becomes "default" for the whole job in STREAMING and
  /// "default-region-<N>" (one group per pipelined region N) in BATCH.
  std::string slot_sharing_group = "default";
  int pipelined_region = 0;                     ///< index into JobGraph::regions
  /// The head's keyed input is sorted: from the first record in BATCH, during backlog in FLIP-327's
  /// mixed mode (StreamGraph::backlog_sorting); see runtime's SortingBacklogDataInput.
  enum class SortedInput { kNone, kBatch, kDuringBacklog };
  SortedInput sorted_input = SortedInput::kNone;
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
  ExchangeMode exchange_mode = ExchangeMode::kPipelined;  ///< resolved: kPipelined or kBatch (blocking)
};

/// A set of vertices joined by pipelined edges (Flink's LogicalPipelinedRegion). Blocking edges
/// separate regions. Ids are dense, numbered in the order of each region's first vertex.
struct LogicalPipelinedRegion {
  int id = 0;
  std::vector<int> vertices;                    ///< indexes into JobGraph::vertices, ascending
};

/// The graph the cluster executes.
struct JobGraph {
  std::string job_id;                           ///< 32 hex digits, deterministic
  std::string name;
  RuntimeMode runtime_mode = RuntimeMode::kStreaming;
  std::vector<JobVertex> vertices;              ///< topologically sorted
  std::vector<JobEdge> edges;
  std::vector<LogicalPipelinedRegion> regions;  ///< see JobVertex::pipelined_region
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

/// Translates a StreamGraph into a JobGraph by chaining operators (Flink's StreamingJobGraphGenerator),
/// then computes the pipelined regions and the slot sharing groups (graph/pipelined_region.h).
///
/// An edge is chained (Flink's isChainable) when the target has exactly one input edge and the edge is a
/// chainable input: chaining is enabled (`pipeline.operator-chaining.enabled`); both ends are in the same
/// slot sharing group; the operators are chainable (areOperatorsChainable); the partitioner is FORWARD
/// and the exchange mode is not BATCH; and no other input edge of the target has the same input index
/// (a union goes through the network).
///
/// Non-chained edges are PIPELINED (Flink's PIPELINED_BOUNDED) or BATCH (BLOCKING): an edge without an
/// explicit mode is BATCH in BATCH runtime mode (Flink's ALL_EDGES_BLOCKING), PIPELINED otherwise.
class StreamingJobGraphGenerator {
 public:
  /// Builds the JobGraph. Throws InternalError on a malformed StreamGraph (e.g. a cycle).
  static JobGraph createJobGraph(const StreamGraph& graph);
  /// Whether `edge` of `graph` would be chained (Flink's isChainable).
  static bool isChainable(const StreamGraph& graph, const StreamEdge& edge);
  /// Flink's isChainableInput: every condition of isChainable except the single input edge.
  static bool isChainableInput(const StreamGraph& graph, const StreamEdge& edge);
  /// Flink's areOperatorsChainable: both have factories; `up` is not NEVER; `down` is ALWAYS, or
  /// HEAD_WITH_SOURCES with a source `up`; equal parallelism; equal max parallelism unless
  /// `pipeline.operator-chaining.chain-operators-with-different-max-parallelism` is true.
  static bool areOperatorsChainable(const StreamGraph& graph, const StreamNode& up, const StreamNode& down);
  /// Flink's arePartitionerAndExchangeModeChainable: FORWARD and not BATCH.
  static bool arePartitionerAndExchangeModeChainable(const StreamEdge& edge);
  /// The exchange of a non-chained edge: its explicit mode, else BATCH in BATCH runtime mode, else
  /// PIPELINED (Flink's determineUndefinedResultPartitionType).
  static ExchangeMode resultExchangeMode(const StreamGraph& graph, const StreamEdge& edge);
};

/// Convenience: Transformations -> StreamGraph -> JobGraph with `config`.
JobGraph buildJobGraph(const std::vector<TransformationPtr>& transformations, const Configuration& config,
                       const std::string& job_name = "");

}  // namespace sluice::graph
