#pragma once
/// Runs a JobGraph on an embedded MiniCluster and sums its metrics into a JobSummary.

#include <functional>
#include <vector>

#include "table/api/table_environment.h"

namespace sluice::graph {
struct JobGraph;
}

namespace sluice::table {

struct JobRunOptions {
  std::function<void(const std::vector<VertexProgress>&)> progress;  ///< may be empty
  int64_t progress_interval_ms = 2000;
};

/// Blocks until the job finishes. Rethrows the job's first failure (its type kept).
JobSummary runJob(const graph::JobGraph& job, const Configuration& config, const JobRunOptions& options);

}  // namespace sluice::table
