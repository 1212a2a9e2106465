#pragma once
/// Processing-time lookup joins (`JOIN dim FOR SYSTEM_TIME AS OF probe.proctime`): Flink's LookupJoin
/// (StreamExecLookupJoin with a LookupJoinRunner over a full-cache lookup function such as the filesystem
/// connector's FileSystemLookupFunction). The dimension table is loaded whole into a per-subtask cache,
/// reloaded once it is older than its TTL; each probe row is joined with the cached rows of its key.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/operators/stream_operator.h"
#include "table/functions/expression.h"
#include "table/runtime/join_spec.h"
#include "types/row_batch.h"

namespace sluice {
class Configuration;
}

namespace sluice::table {

/// A table that a lookup join can read whole (Flink's LookupTableSource with a full cache; the connector
/// provides it, e.g. the filesystem connector). Immutable; load() is const and may run on several task
/// threads at once.
class LookupTableLoader {
 public:
  virtual ~LookupTableLoader() = default;
  /// The rows load() produces: the table's physical columns.
  virtual const types::RowType& rowType() const = 0;
  /// Appends every row of the table (+I, in the table's order) to `out` as batches of rowType().
  /// `config` (may be null) is the job configuration. Throws InputError "<file>:<line>: ..." on a row
  /// that does not parse, UserError when the data cannot be read (a missing file names its path).
  virtual void load(const Configuration* config, std::vector<types::RowBatch>& out) const = 0;
  /// How long a loaded cache is used before it is loaded again (ms; Flink's `lookup.join.cache.ttl`).
  virtual int64_t cacheTtlMs() const = 0;
};

/// The description of one lookup join (plain data).
struct LookupJoinSpec {
  FlinkJoinType type = FlinkJoinType::kInner;  ///< kInner or kLeft
  std::string table_name;                      ///< for messages
  std::shared_ptr<const LookupTableLoader> loader;
  /// Flink's calcOnTemporalTable, applied to the rows as they are loaded: `dim_condition` (may be null;
  /// the ON conjuncts that read the dimension table only) and `dim_projections` over loader->rowType()
  /// (empty: the loaded row as it is). Its output is the dimension side of the joined row, followed by
  /// `dim_projections.size() - dim_width` extra key columns (keys cast to the type they are compared in).
  ExprPtr dim_condition;
  std::vector<ExprPtr> dim_projections;
  std::vector<std::string> dim_names;  ///< names of the calc's output columns (empty: the loader's)
  size_t dim_width = 0;  ///< columns of the dimension side in the output row
  /// Equi keys: probe row column probe_keys[i] = dimension calc output column dim_keys[i] (same key form:
  /// both integral, both strings, or the same type). A NULL key matches nothing.
  std::vector<int> probe_keys;
  std::vector<int> dim_keys;
  /// The rest of the ON condition over the joined row (probe columns, then the dimension side); may be null.
  ExprPtr join_condition;
};

/// Joins each probe row with the cached dimension rows of its key (Flink's LookupJoinRunner):
///  - the key is read from the probe row's key columns; no match when one is NULL;
///  - every cached row of that key for which the join condition is TRUE gives [probe + dim] with the
///    probe row's RowKind, in the table's order;
///  - LEFT: a probe row without such a row gives [probe + NULLs].
/// Cache: loaded in open() (all rows through the dimension calc, indexed by the key), and loaded again
/// before the first batch that arrives once it is older than `lookup.join.cache.ttl` (processing time);
/// a reload that fails fails the task. Nothing is kept in state: the cache is not checkpointed, a
/// restored task loads it anew. Stateless otherwise, so it runs chained after the probe side.
/// Watermarks are forwarded. Threading: task thread only.
class LookupJoinOperator : public runtime::StreamOperator {
 public:
  /// Throws UserError on out-of-range keys, key lists of different lengths, a non-BOOLEAN condition or
  /// a dimension calc that does not fit the loader's rows.
  LookupJoinOperator(types::RowType probe_type, LookupJoinSpec spec);
  ~LookupJoinOperator() override;

  /// Probe columns, then the dimension side (nullable for a LEFT join).
  static types::RowType outputType(const types::RowType& probe, const types::RowType& dim, FlinkJoinType type);

  /// Loads the cache; throws what the loader throws.
  void open(const runtime::OperatorContext& ctx, runtime::Output* output) override;
  void processBatch(types::RowBatch&& batch) override;

  /// Times the cache was loaded (open() included), for tests.
  int64_t numLoads() const;
  /// Dimension rows in the cache (after the dimension condition), for tests.
  size_t numCachedRows() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The dimension side's row type of `spec` (the first dim_width columns of its calc output).
types::RowType lookupDimType(const LookupJoinSpec& spec);

/// Factory of LookupJoinOperator; validates the arguments now (UserError), so errors surface at plan time.
std::shared_ptr<const runtime::StreamOperatorFactory> makeLookupJoinFactory(types::RowType probe_type,
                                                                            LookupJoinSpec spec);

}  // namespace sluice::table
