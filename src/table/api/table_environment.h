#pragma once
/// The SQL entry point (Flink's TableEnvironment / SQL client script mode): parses a script and
/// runs its statements in order on an embedded MiniCluster. DDL updates the session catalog; SET
/// updates the session configuration; each INSERT (or statement set) and each bare SELECT runs as
/// one job and blocks until it finishes (Flink's `table.dml-sync` = true). Client thread only;
/// callbacks run on task threads, serialized by the environment.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/config.h"

namespace sluice::types {
class RowBatch;
struct RowType;
}  // namespace sluice::types

namespace sluice::cluster {
struct JobExecutionResult;
}

namespace sluice::table {

class Catalog;
class FactoryRegistry;

/// What one job did (sums over subtasks).
struct JobSummary {
  std::string name;
  int64_t rows_read = 0;      ///< rows emitted by source operators
  int64_t rows_written = 0;   ///< rows received by sink operators
  double wall_seconds = 0;
  /// The cluster's result with every vertex's and subtask's metrics (cluster/mini_cluster.h; the JSON
  /// dump of cluster/job_metrics.h). Never null once the job finished.
  std::shared_ptr<const cluster::JobExecutionResult> execution;
};

/// Progress of a running job, per JobVertex: name, parallelism, records in and out so far, and the time
/// metrics over the last progress interval (max over subtasks, ms per second).
struct VertexProgress {
  std::string name;
  int parallelism = 1;
  int64_t records_in = 0;
  int64_t records_out = 0;
  double busy_time_ms_per_second = 0;           ///< `busyTimeMsPerSecond`
  double back_pressured_time_ms_per_second = 0;  ///< `backPressuredTimeMsPerSecond`
  double idle_time_ms_per_second = 0;           ///< `idleTimeMsPerSecond`
};

class TableEnvironment {
 public:
  /// `config` holds defaults < config file < -D values; SET statements change it further.
  TableEnvironment(Configuration config, std::shared_ptr<const FactoryRegistry> factories);
  ~TableEnvironment();

  Configuration& config() { return config_; }

  /// Runs every statement of `script` in order. Throws SqlError (with line:column and caret),
  /// ConfigError, UserError (connector/input problems) or InternalError; statements before the
  /// failing one have taken effect.
  void executeScript(std::string_view script);

  /// EXPLAIN of every INSERT / SELECT / statement set in `script` (DDL and SET are applied):
  /// the optimized plan, the StreamGraph and the JobGraph as text, or the JobGraph as Flink's JSON
  /// plan when `json` is true (one JSON document per job, newline separated).
  std::string explainScript(std::string_view script, bool json);

  /// Receives the changelog of bare SELECTs, one batch at a time, with the result's schema.
  void setCollectCallback(std::function<void(const types::RowType&, const types::RowBatch&)> callback);
  /// Receives the output of EXPLAIN and SET statements inside a script.
  void setMessageCallback(std::function<void(const std::string&)> callback);
  /// Called about every `interval_ms` while a job runs (from a non-task thread).
  void setProgressCallback(std::function<void(const std::vector<VertexProgress>&)> callback, int64_t interval_ms);

  /// Cancels the running job and skips the rest of the script (Flink's `JobClient#cancel`; e.g. on Ctrl-C).
  /// Any thread, returns at once; executeScript then returns after the job's tasks stopped, and the job's
  /// summary has status CANCELED. Not async-signal-safe: call it from a normal thread.
  void cancel();
  /// True once cancel() was called.
  bool cancelled() const;

  /// Summaries of the jobs run so far, in order.
  const std::vector<JobSummary>& jobs() const { return jobs_; }

 private:
  struct Impl;
  Configuration config_;
  std::shared_ptr<const FactoryRegistry> factories_;
  std::unique_ptr<Catalog> catalog_;
  std::unique_ptr<Impl> impl_;
  std::vector<JobSummary> jobs_;
};

}  // namespace sluice::table
