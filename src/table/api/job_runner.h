#pragma once
/// Runs a JobGraph on an embedded MiniCluster and sums its metrics into a JobSummary.

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "table/api/table_environment.h"

namespace sluice::graph {
struct JobGraph;
}
namespace sluice::cluster {
class JobHandle;
class JobListener;
}

namespace sluice::table {

/// Cancels the running job from another thread (Flink's `JobClient#cancel`). Thread-safe. A cancel that
/// comes before a job started cancels it as soon as it starts; once requested it stays requested.
class JobCancellation {
 public:
  /// Cancels the attached job, if any (returns at once), and every job attached later.
  void cancel();
  bool requested() const;
  /// Forgets a cancel() so the next job runs; call while no job is attached.
  void reset();
  /// Takes a savepoint of the running job into `target_dir` (empty: execution.checkpointing.savepoint-dir)
  /// and returns its path (Flink's `flink savepoint`), of any STREAMING job, also without a checkpoint
  /// interval. Throws ConfigError when no directory is named, UserError when no job runs, it is a BATCH job
  /// or the savepoint fails; waits at most `timeout`.
  std::string savepoint(const std::string& target_dir, std::chrono::milliseconds timeout);
  /// runJob's side: the handle of the running job (null when it ended).
  void attach(cluster::JobHandle* handle);

 private:
  mutable std::mutex mu_;
  cluster::JobHandle* handle_ = nullptr;
  bool requested_ = false;
};

struct JobRunOptions {
  std::function<void(const std::vector<VertexProgress>&)> progress;  ///< may be empty
  int64_t progress_interval_ms = 2000;
  std::shared_ptr<JobCancellation> cancellation;  ///< may be null
  std::function<void(const std::string&)> status;  ///< status lines (checkpoint directory); may be empty
  /// Told when the job is deployed and when it ends (cluster/job_listener.h).
  std::vector<std::shared_ptr<cluster::JobListener>> listeners;
};

/// Blocks until the job finishes or is cancelled (the summary's execution then has status CANCELED).
/// Rethrows the job's first failure (its type kept).
JobSummary runJob(const graph::JobGraph& job, const Configuration& config, const JobRunOptions& options);

}  // namespace sluice::table
