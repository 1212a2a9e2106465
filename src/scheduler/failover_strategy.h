#pragma once
/// Which regions a task failure restarts (Flink's FailoverStrategy, `jobmanager.execution.failover-strategy`).
///
/// `region` (Flink's RestartPipelinedRegionFailoverStrategy): the failed task's pipelined region; every
/// region that consumes a result of a restarted region (the result is produced again, so its consumers
/// read it again from the start); and, for a restarted region's blocking inputs whose data is no longer
/// available, the producing region — transitively. Blocking results whose data is still there (spill
/// files of a finished producer) are read again by the restarted consumers without restarting the
/// producer. An all-pipelined connected job is one region: the whole job restarts, as with `full`.
/// `full` (Flink's RestartAllFailoverStrategy): every region.
/// Pure functions over the ExecutionGraph; thread-compatible.

#include <functional>
#include <string>
#include <vector>

#include "scheduler/execution_graph.h"

namespace sluice::scheduler {

enum class FailoverStrategy { kRegion, kFull };

/// `jobmanager.execution.failover-strategy`: "region" or "full" (case-insensitive); ConfigError otherwise.
FailoverStrategy parseFailoverStrategy(const std::string& value);

/// The regions (ExecutionGraph::regions() ids, ascending) to restart when a task of region `failed_region`
/// fails. `result_available(edge)`: the blocking result of JobGraph edge `edge` can be read again.
std::vector<int> regionsToRestart(const ExecutionGraph& graph, int failed_region, FailoverStrategy strategy,
                                  const std::function<bool(int edge)>& result_available);

}  // namespace sluice::scheduler
