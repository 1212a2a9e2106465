#pragma once
/// Sub-plan and source reuse across the sink roots of one job (Flink's SubplanReuser and ScanReuser):
/// nodes with the same digest — the same kind, schema, parallelism, arguments and (reused) inputs —
/// become one node with several consumers, so an `EXECUTE STATEMENT SET` whose INSERTs read one table
/// reads it once and feeds every branch from one source.
///
/// Runs before column pruning, on scans that still produce every column of their table: two scans of
/// one table are one node however many columns each branch reads, and pruning then gives the shared
/// scan the union of the columns its consumers read (what Flink's ScanReuser does for scans that differ
/// only in their pushed-down projection; here each consumer reads its columns by index, so no extra
/// projection is needed per branch).
///
/// Options (Flink's OptimizerConfigOptions, both default true):
/// - `table.optimizer.reuse-sub-plan-enabled`: off = no reuse at all (every node is kept as planned);
/// - `table.optimizer.reuse-source-enabled`: off = scans are never reused (each INSERT reads its own
///   source again), and so nothing above them is; only has an effect with sub-plan reuse on.
/// Sinks are never reused. Client thread only.

#include <vector>

#include "table/planner/rel_node.h"

namespace sluice {
class Configuration;
}

namespace sluice::table {

/// Returns roots in which duplicated sub-plans are one shared node (copies where an input changed; the
/// given plans are not modified). Returns `roots` as they are when sub-plan reuse is off.
std::vector<RelNodePtr> reuseDuplicatedSubplans(const std::vector<RelNodePtr>& roots, const Configuration& config);

}  // namespace sluice::table
