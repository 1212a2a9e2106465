#pragma once
/// Transformations: what the API and the SQL planner produce, and what StreamGraphGenerator reads
/// (Flink's org.apache.flink.api.dag.Transformation). Plain data: operators are referenced through an
/// opaque OperatorFactory that the runtime knows how to instantiate (graph sits above runtime).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "types/logical_type.h"

namespace sluice::graph {

/// Flink's ChainingStrategy: ALWAYS chains both ways; HEAD only starts chains (nothing chains into it;
/// `startNewChain`); NEVER never chains (`disableChaining`); HEAD_WITH_SOURCES is like HEAD except that
/// source operators may chain into it.
enum class ChainingStrategy { kAlways, kHead, kNever, kHeadWithSources };

/// How the data of an edge is exchanged (Flink's StreamExchangeMode). kUndefined edges take the job's
/// default when the JobGraph is built: PIPELINED in STREAMING, BATCH (blocking) in BATCH runtime mode.
/// An explicit kBatch edge is never chained; kPipelined stays pipelined even in BATCH mode.
enum class ExchangeMode { kUndefined, kPipelined, kBatch };

/// How records are distributed to the consumer's subtasks (Flink's ship strategies).
enum class ShipStrategy { kForward, kRebalance, kRescale, kShuffle, kBroadcast, kGlobal, kHash, kCustom };

/// "FORWARD", "REBALANCE", "HASH", ... as in Flink's JSON plan.
const char* shipStrategyName(ShipStrategy s);

/// Base of a partitioner that works on DataStream records (C++ objects) rather than row columns:
/// runtime::ObjectPartitioner derives from it (key hashing for HASH, the user's function for CUSTOM).
class RecordPartitioner {
 public:
  virtual ~RecordPartitioner() = default;
};

/// A partitioner as data: the strategy and, for HASH, the key columns of the input row.
struct PartitionerSpec {
  ShipStrategy strategy = ShipStrategy::kForward;
  std::vector<int> key_columns;  ///< HASH: indexes into the input RowType
  /// HASH / CUSTOM over DataStream records: computes key hashes or target channels of object batches.
  /// Null for SQL rows (which use `key_columns`).
  std::shared_ptr<const RecordPartitioner> record_partitioner;
};

/// Base of every operator factory; runtime::StreamOperatorFactory derives from it.
class OperatorFactory {
 public:
  virtual ~OperatorFactory() = default;
  /// True when the operator is a source (no inputs; driven by the task loop).
  virtual bool isSource() const { return false; }
  virtual ChainingStrategy chainingStrategy() const { return ChainingStrategy::kAlways; }
  /// A keyed one-input operator whose input the runtime may sort by key (in BATCH mode and during backlog,
  /// FLIP-327; runtime::StreamOperatorFactory::createKeyedInputSorter).
  virtual bool sortsKeyedInput() const { return false; }
};

enum class TransformationKind {
  kSource,     ///< no inputs; factory is a source
  kOneInput,   ///< one logical input (possibly a union); factory is a one-input operator
  kSink,       ///< like kOneInput, no output
  kPartition,  ///< virtual: sets the partitioner of the edge to its consumer
  kUnion,      ///< virtual: all inputs feed the consumer
};

/// One node of the transformation DAG. Built once by the client, then read-only.
struct Transformation {
  int id = 0;                       ///< unique within a job, increasing in creation order
  std::string name;                 ///< operator name, e.g. "Calc", "GroupAggregate"
  std::string description;          ///< longer text shown by explain
  TransformationKind kind = TransformationKind::kOneInput;
  int parallelism = -1;             ///< -1: use parallelism.default
  int max_parallelism = -1;         ///< -1: use pipeline.max-parallelism / derived
  std::string uid;
  std::string slot_sharing_group;   ///< empty: "default"
  std::vector<std::shared_ptr<Transformation>> inputs;
  std::shared_ptr<const OperatorFactory> factory;  ///< null for virtual kinds
  /// Overrides the factory's chaining strategy when set (DataStream `disableChaining`, `startNewChain`).
  std::optional<ChainingStrategy> chaining_strategy;
  PartitionerSpec partitioner;      ///< kPartition only
  ExchangeMode exchange_mode = ExchangeMode::kUndefined;  ///< kPartition only: mode of the edges it sets
  types::RowType output_type;       ///< schema of the rows this node emits
};

using TransformationPtr = std::shared_ptr<Transformation>;

}  // namespace sluice::graph
