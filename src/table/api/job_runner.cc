#include "table/api/job_runner.h"

#include "cluster/mini_cluster.h"
#include "graph/job_graph.h"

namespace sluice::table {

JobSummary runJob(const graph::JobGraph& job, const Configuration& config, const JobRunOptions& options) {
  cluster::MiniCluster cluster(config);
  cluster::JobExecutionResult result = cluster.execute(job);
  JobSummary summary;
  summary.name = job.name;
  (void)options;
  summary.wall_seconds = result.wall_seconds;
  return summary;
}

}  // namespace sluice::table
