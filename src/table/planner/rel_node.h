#pragma once
/// The physical plan of a SQL statement (Flink's FlinkPhysicalRel / ExecNode role): a tree of
/// relational nodes, each with its output schema and changelog mode, before it becomes
/// Transformations. Built and read on the client thread only.

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "table/catalog/table_factory.h"
#include "table/functions/expression.h"
#include "table/runtime/aggregate_call.h"
#include "table/runtime/over_spec.h"
#include "table/runtime/rank_spec.h"
#include "table/runtime/join_spec.h"
#include "table/runtime/lookup_join.h"
#include "table/runtime/temporal_join.h"
#include "types/logical_type.h"

namespace sluice::table {

class TableFunction;  // table/functions/user_function.h

enum class RelKind {
  kTableSourceScan,   ///< a connector source (physical columns)
  kCalc,              ///< optional condition + projections (fused filter/project)
  kWatermarkAssigner, ///< emits watermarks from a column holding the watermark expression value
  kGroupAggregate,    ///< GROUP BY without windows: emits a changelog (+I, -U/+U, -D)
  kWindowAggregate,   ///< GROUP BY window_start, window_end over TUMBLE/HOP/CUMULATE: +I per fired window
  kUnion,             ///< UNION ALL
  kChangelogNormalize,  ///< last row per primary key (group_keys) after a changelog source: +I/-U/+U/-D
  kJoin,              ///< regular join of inputs[0] (left) and inputs[1] (right): left ++ right columns
  kIntervalJoin,      ///< time-bounded join (`join` + `interval`), columns as kJoin
  kSink,              ///< a connector sink, or the collect sink of a bare SELECT
  kRank,              ///< Top-N per partition (`rank`): ROW_NUMBER filter, ORDER BY ... LIMIT, LIMIT
  kDeduplicate,       ///< first/last row per key on a time attribute (`rank`)
  kOverAggregate,     ///< OVER window aggregates (`over`): each input row followed by its aggregates
  kReplicateRows,     ///< INTERSECT / EXCEPT ALL: input [n, cols...] -> n copies of cols (ReplicateRowsFunction)
  kLookupJoin,        ///< processing-time lookup join of inputs[0] (the probe) with a table read whole (`lookup`)
  kTemporalJoin,      ///< event-time temporal join of inputs[0] with the versioned inputs[1] (`join`, `temporal`)
  kWindowJoin,        ///< window join (`join`, `window`, `window_join_ends`), columns as kJoin, fired by watermarks
  kWindowTableFunction,  ///< TUMBLE/HOP/CUMULATE TVF alone (`window`): input ++ window_start, window_end, window_time
  kCorrelate,         ///< LATERAL TABLE(f(...)) after inputs[0] (`correlate`): each row ++ each row f gives it
  kWindowRank,        ///< window Top-N (`rank`, `window`, `window_rank_cols`): each window's top rows when it fires
  kWindowDeduplicate, ///< window deduplication (`rank`, `window`, `window_rank_cols`): each window's first/last row
};

struct RelNode;
using RelNodePtr = std::shared_ptr<RelNode>;

/// kCorrelate: the table function call (Flink's Correlate over a FlinkLogicalTableFunctionScan).
struct CorrelateSpec {
  std::string function_name;
  std::shared_ptr<const TableFunction> function;
  std::vector<ExprPtr> args;  ///< over the input row, cast to the function's parameter types
  bool left_outer = false;    ///< LEFT JOIN LATERAL TABLE(...) ON TRUE: a row without results is padded
};

/// One plan node. Fields are used per kind as commented.
struct RelNode {
  RelKind kind = RelKind::kCalc;
  types::RowType row_type;          ///< output schema (names are the SQL names)
  std::vector<bool> rowtime;        ///< per output column: an event-time attribute (watermarked)
  /// The changelog this node emits (Flink's ChangelogMode trait, inferred bottom-up): scans take their
  /// source's, Calc/Union/sinks their inputs', GroupAggregate always a retract changelog, a Join insert-only
  /// for an inner join of insert-only inputs and a retract changelog otherwise.
  ChangelogMode changelog = ChangelogMode::kInsertOnly;
  /// True when the node emits -U/+U/-D rows (any mode but insert-only).
  bool producesUpdates() const { return changelog != ChangelogMode::kInsertOnly; }
  /// BATCH mode: the node's streaming operator would emit a changelog here; the translator chains a
  /// FinalResultOperator behind it (batch_operators.h), so the node emits its final rows as +I at the end
  /// of its input and `changelog` is insert-only.
  bool batch_final = false;
  std::vector<RelNodePtr> inputs;
  int parallelism = -1;             ///< -1 = parallelism.default
  /// Part of a scan: the source, the Calc/WatermarkAssigner of its computed columns and watermark, and
  /// Calcs directly over them (as Flink pushes watermarks, projections and filters into a source that
  /// supports it). They run at the source's parallelism (`scan.parallelism`); the first node after the
  /// block reads through a REBALANCE exchange at the default parallelism (FLIP-367).
  bool in_source_block = false;

  // kTableSourceScan
  std::string table_name;
  /// A VALUES clause (or SELECT without FROM): the source emits rows fixed at planning time and explain
  /// prints it as Flink's Values node.
  bool is_values = false;
  std::shared_ptr<ScanTableSource> source;
  /// kTableSourceScan of a table with ROW columns: the field path of each physical output column
  /// (nested_fields.h), handed to ScanTableSource::applyNestedProjection; empty otherwise.
  std::vector<std::vector<int>> nested_paths;
  /// kTableSourceScan: the table's PRIMARY KEY as indexes into the source's physical row (empty when
  /// none); kSink: the sink table's PRIMARY KEY as indexes into `row_type`.
  std::vector<int> primary_key;
  /// kSink: the columns declared NOT NULL whose values may be NULL (indexes into `row_type`, ascending);
  /// the translator puts a NOT NULL enforcer in front of the sink for them.
  std::vector<int> not_null_columns;
  CorrelateSpec correlate;          ///< kCorrelate
  // kCalc
  ExprPtr condition;                ///< may be null
  std::vector<ExprPtr> projections;
  // kWatermarkAssigner
  int rowtime_index = -1;
  int watermark_index = -1;
  ExprPtr watermark_expr;  ///< for explain only (also on a scan: the watermark pushed into it)
  // kGroupAggregate / kWindowAggregate
  std::vector<int> group_keys;
  std::vector<AggregateCall> aggregates;
  WindowSpec window;
  /// kWindowAggregate from a legacy group window (GROUP BY TUMBLE(ts, ...)): Flink's GroupWindowAggregate.
  bool group_window = false;
  // kRank / kDeduplicate (sql_to_rel_rank.cc)
  RankSpec rank;
  // kOverAggregate (sql_to_rel_over.cc): indexes into the input row
  OverSpec over;
  // kJoin: keys and input specs index the inputs' rows; the condition reads the output row
  JoinSpec join;
  // kIntervalJoin: the bounds (time indexes into the inputs) and the time predicates they came from (over
  // the output row, for explain); `join.non_equi_condition` is the residual condition only
  IntervalJoinBounds interval;
  ExprPtr interval_condition;
  // kTemporalJoin (sql_to_rel_temporal.cc): `join` holds its keys and condition as for kJoin, plus the times
  TemporalJoinSpec temporal;
  /// kWindowJoin: the window_start and window_end columns of the left input, then of the right one.
  std::array<int, 4> window_join_cols{-1, -1, -1, -1};
  /// kWindowRank / kWindowDeduplicate: the input's window_start and window_end columns (the ones in its
  /// PARTITION BY); `rank.partition_keys` are the other PARTITION BY columns.
  std::array<int, 2> window_rank_cols{-1, -1};
  std::vector<int> temporal_primary_key;  ///< the versioned side's primary key (explain)
  // kLookupJoin (sql_to_rel_temporal.cc): keys index the probe row and the dimension calc's output
  LookupJoinSpec lookup;
  std::vector<std::string> lookup_table_fields;  ///< the dimension table's columns (explain)
  std::vector<std::string> lookup_key_fields;    ///< per key: the dimension column it looks up (explain)
  // kSink
  std::shared_ptr<DynamicTableSink> sink;  ///< null for the collect sink
  std::string sink_name;

  /// Flink-like one-line description: "Calc(select=[a, +(b, 1) AS c], where=[>(b, 0)])".
  std::string describe() const;
};

/// describe() of a kRank / kDeduplicate node (rel_node_rank.cc), as Flink's explain prints them:
/// "Rank(strategy=[AppendFastStrategy], rankType=[ROW_NUMBER], rankRange=[rankStart=1, rankEnd=3],
/// partitionBy=[k], orderBy=[v DESC], select=[k, v, w0$o0])", "SortLimit(orderBy=[v DESC], offset=[0],
/// fetch=[3], strategy=[AppendFastStrategy])", "Limit(offset=[0], fetch=[3])",
/// "Deduplicate(keep=[FirstRow], key=[k], order=[PROCTIME])".
std::string describeRank(const RelNode& rel);
/// A TUMBLE / HOP / CUMULATE window as Flink's WindowSpec.toSummaryString: "TUMBLE(size=[10 min])",
/// "HOP(size=[10 min], slide=[5 min])", "CUMULATE(max_size=[1 h], step=[10 min])", with offset=[..] when set.
std::string windowSummary(const WindowSpec& window);
/// A window attached to a node's input columns, as Flink's WindowAttachedWindowingStrategy.toSummaryString:
/// "TUMBLE(win_start=[window_start], win_end=[window_end], size=[10 min])".
std::string windowAttachedSummary(const WindowSpec& window, const std::string& start, const std::string& end);
/// Calcite's uniquify, as a join names its output: a name seen before gets the first free suffix 0, 1, ...
/// ("id", "id" -> "id", "id0").
void uniquifyNames(std::vector<std::string>& names);

/// Multi-line tree text, as Flink's EXPLAIN "Optimized Physical Plan" ("+- " children). A node read by
/// several consumers (a reused sub-plan) is printed in full once with "(reuse_id=[N])" after its
/// description, and as "Reused(reference_id=[N])" where it is read again, as Flink prints it.
std::string explainPlan(const RelNode& root);
/// The same for the sink roots of one job (a statement set), numbering reused nodes across them; the trees
/// are separated by a blank line.
std::string explainPlan(const std::vector<RelNodePtr>& roots);

}  // namespace sluice::table
