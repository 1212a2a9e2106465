#pragma once
/// The NOT NULL constraint check in front of a table sink (Flink's ConstraintEnforcer with its
/// NotNullEnforcer, run by CommonExecSink for the sink columns declared NOT NULL whose query values may be
/// NULL). Every method of the operator runs on the owning task's thread.

#include <memory>
#include <string>
#include <vector>

#include "common/config.h"
#include "runtime/operators/stream_operator.h"

namespace sluice::table {

/// `table.exec.sink.not-null-enforcer` (Flink's ExecutionConfigOptions.TABLE_EXEC_SINK_NOT_NULL_ENFORCER):
/// `ERROR` (default) fails the job on a NULL in a NOT NULL sink column, `DROP` drops such rows silently.
extern const ConfigOption<std::string> kSinkNotNullEnforcer;

/// What the enforcer of one sink checks.
struct NotNullConstraint {
  std::string table_name;         ///< the sink table (for the message)
  std::vector<int> columns;       ///< indexes of the NOT NULL columns to check, ascending
  std::vector<std::string> names; ///< their names, parallel to `columns`
  bool drop = false;              ///< DROP: filter the rows out; ERROR: throw
};

/// Checks every row (of any RowKind) of each batch. ERROR: throws UserError "Column 'c' of table 't' is NOT
/// NULL, but a NULL value is being written into it ..." naming the first NULL column of the first bad row;
/// DROP: forwards the batch without its bad rows. Watermarks pass through.
class NotNullEnforcerOperator : public runtime::StreamOperator {
 public:
  explicit NotNullEnforcerOperator(std::shared_ptr<const NotNullConstraint> constraint)
      : constraint_(std::move(constraint)) {}

  void processBatch(types::RowBatch&& batch) override;

 private:
  std::shared_ptr<const NotNullConstraint> constraint_;
};

/// A factory for the enforcer of a Transformation; the constraint is shared by all subtasks (immutable).
std::shared_ptr<const runtime::StreamOperatorFactory> makeNotNullEnforcerFactory(
    std::shared_ptr<const NotNullConstraint> constraint);

/// The operator name shown in the StreamGraph: "ConstraintEnforcer[NotNullEnforcer(fields=[a, b])]".
std::string notNullEnforcerName(const NotNullConstraint& constraint);

}  // namespace sluice::table
