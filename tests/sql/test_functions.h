#pragma once
/// The user-defined functions the SQL files reach with CREATE FUNCTION ... AS 'class' (a program would
/// register its own with table::registerFunctionClass):
/// - sluice.test.udf.WeightedAvg: wavg(v BIGINT, w INT) -> DOUBLE, SUM(v * w) / SUM(w), NULL while the
///   weights sum to 0; rows with a NULL v or w are skipped; retract and merge.
/// - sluice.test.udf.WeightedAvgInsertOnly: the same without retract and merge.
/// - sluice.test.udf.Collect: collect(s STRING) -> STRING NOT NULL, the values (NULLs skipped) sorted and
///   joined by '|' (so the result does not depend on arrival order); retract (one occurrence) and merge.
/// - sluice.test.udf.Unlucky: unlucky(v INT) -> BIGINT, the count of its rows; throws "13 is unlucky" for 13.

namespace sluice::sqltest {

/// Registers the classes above (idempotent).
void registerTestFunctions();

}  // namespace sluice::sqltest
