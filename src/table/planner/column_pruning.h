#pragma once
/// Column pruning and projection push-down (Flink's ProjectRemove/CalcPruning and
/// PushProjectIntoTableSourceScanRule): from each sink down to the scans, every node keeps only the
/// columns some consumer reads, and a scan whose source supports it produces only those fields.

#include "table/planner/rel_node.h"

namespace sluice::table {

/// Returns a plan equal in results to `root` (a kSink) that carries fewer columns. Rewrites copies;
/// `root` is left as is, except that sources receive ScanTableSource::applyProjection.
RelNodePtr pruneColumns(const RelNodePtr& root);

}  // namespace sluice::table
