#pragma once
/// Column pruning and projection push-down (Flink's ProjectRemove/CalcPruning and
/// PushProjectIntoTableSourceScanRule): from each sink down to the scans, every node keeps only the
/// columns some consumer reads, and a scan whose source supports it produces only those fields.

#include <vector>

#include "table/planner/rel_node.h"

namespace sluice::table {

/// Returns plans equal in results to `roots` (kSinks) that carry fewer columns. Rewrites copies; the
/// roots are left as they are, except that sources receive ScanTableSource::applyProjection. The roots
/// may share nodes (subplan_reuse.h): a shared node stays shared and keeps the union of the columns its
/// consumers read (a shared scan reads that union once, as Flink's ScanReuser).
std::vector<RelNodePtr> pruneColumns(const std::vector<RelNodePtr>& roots);
/// The same for one plan.
RelNodePtr pruneColumns(const RelNodePtr& root);

}  // namespace sluice::table
