#pragma once
/// Job metrics from subtask IO snapshots: per-second rates, vertex aggregates and the JSON dump written by
/// `sluice run --metrics=FILE.json` (shape in src/cli/README.md). Pure functions, any thread.

#include <string>
#include <vector>

#include "cluster/mini_cluster.h"

namespace sluice::cluster {

/// Fills the rate fields of `s` from its cumulative `io` values: over the window since `previous` (the
/// same subtask in an earlier snapshot) when given, else over the subtask's whole running time. A window
/// in which the subtask did not run gives zeros.
void computeRates(SubtaskProgress& s, const SubtaskProgress* previous);

/// Sets the vertex's network and time fields from its `subtasks` (sums, max or min as documented on
/// VertexProgress). Leaves records_in/out and the operators alone.
void aggregateSubtasks(VertexProgress& v);

/// One job as a JSON object: {"jid", "name", "state", "duration", "vertices": [...]} with Flink's metric
/// names per vertex and per subtask (with its gates and partitions).
std::string jobMetricsJson(const JobExecutionResult& result);

/// {"jobs": [jobMetricsJson(r) for each result]}, pretty-printed.
std::string metricsDocumentJson(const std::vector<JobExecutionResult>& results);

}  // namespace sluice::cluster
