#pragma once
/// The SQL entry point (Flink's TableEnvironment / SQL client script mode): parses a script and
/// runs its statements in order on an embedded MiniCluster. DDL updates the session catalog; SET
/// updates the session configuration; each INSERT (or statement set) and each bare SELECT runs as
/// one job and blocks until it finishes (Flink's `table.dml-sync` = true). Client thread only;
/// callbacks run on task threads, serialized by the environment.

#include <cstdint>
#include <chrono>
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
class JobListener;
}
namespace sluice::graph {
struct JobGraph;
}

namespace sluice::table {

class Catalog;
class FactoryRegistry;
class UserDefinedFunction;
class StatementSet;

/// What one job did (sums over subtasks).
struct JobSummary {
  std::string name;
  int64_t rows_read = 0;      ///< rows emitted by source operators
  int64_t rows_written = 0;   ///< rows received by sink operators
  /// Rows window operators dropped as late (Flink's numLateRecordsDropped, summed over the job).
  int64_t late_rows_dropped = 0;
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
  int sorting_subtasks = 0;                     ///< subtasks sorting their input now (backlog, BATCH)
  int64_t records_sorted = 0;                   ///< records its sorted input took so far
  /// Subtasks whose source reports backlog now (FLIP-309 / FLIP-328; max over the chain's operators).
  int backlog_subtasks = 0;
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
  /// Called on the client thread just before the job of a bare SELECT starts, with the result's schema
  /// (that of the batches the collect callback gets), so a client can print a header even when no row
  /// comes.
  void setQueryStartCallback(std::function<void(const types::RowType&)> callback);
  /// Receives the rows of SHOW and DESCRIBE statements (Flink prints them as a table in every result mode).
  void setTableResultCallback(std::function<void(const types::RowType&, const types::RowBatch&)> callback);
  /// Receives the output of EXPLAIN and SET statements inside a script.
  void setMessageCallback(std::function<void(const std::string&)> callback);
  /// Receives status lines about running jobs (e.g. where a job's checkpoints go), not results: the CLI
  /// prints them on stderr.
  void setStatusCallback(std::function<void(const std::string&)> callback);
  /// Called about every `interval_ms` while a job runs (from a non-task thread).
  void setProgressCallback(std::function<void(const std::vector<VertexProgress>&)> callback, int64_t interval_ms);

  /// Adds a listener told when each job of this environment is deployed and when it ends (Flink's
  /// registerJobListener; cluster/job_listener.h). Call before executeScript.
  void registerJobListener(std::shared_ptr<cluster::JobListener> listener);

  /// Cancels the running job and skips the rest of the script (Flink's `JobClient#cancel`; e.g. on Ctrl-C).
  /// Any thread, returns at once; executeScript then returns after the job's tasks stopped, and the job's
  /// summary has status CANCELED. Not async-signal-safe: call it from a normal thread.
  void cancel();
  /// Takes a savepoint of the running job (see JobCancellation::savepoint) and returns its path.
  std::string savepoint(const std::string& target_dir, std::chrono::milliseconds timeout);
  /// True once cancel() was called.
  bool cancelled() const;
  /// Forgets an earlier cancel(), so later statements run (the SQL client's Ctrl-C cancels one query,
  /// not its session). Call only between statements, while no job runs.
  void resetCancellation();

  /// Summaries of the jobs run so far, in order.
  const std::vector<JobSummary>& jobs() const { return jobs_; }

  /// An empty StatementSet whose INSERTs run as one job in this environment (Flink's
  /// TableEnvironment#createStatementSet). The set refers to this environment, which must outlive it.
  StatementSet createStatementSet();

  /// Registers a user-defined scalar, table or aggregate function (user_function.h, aggregate_function.h)
  /// under `name` (Flink's createTemporarySystemFunction): it shadows a built-in of that name. Throws
  /// UserError when a temporary system function of that name exists.
  void createTemporarySystemFunction(const std::string& name, std::shared_ptr<const UserDefinedFunction> function);
  /// The same in the default catalog and database (Flink's createTemporaryFunction), resolved after the
  /// built-ins. Throws UserError when a temporary function of that name exists.
  void createTemporaryFunction(const std::string& name, std::shared_ptr<const UserDefinedFunction> function);
  /// Removes a function registered by the calls above; false when there is none of that name.
  bool dropTemporarySystemFunction(const std::string& name);
  bool dropTemporaryFunction(const std::string& name);

 private:
  friend class StatementSet;
  /// Runs a compiled job to its end and appends its summary to jobs().
  void runJobGraph(const graph::JobGraph& job);

  struct Impl;
  Configuration config_;
  std::shared_ptr<const FactoryRegistry> factories_;
  std::unique_ptr<Catalog> catalog_;
  std::unique_ptr<Impl> impl_;
  std::vector<JobSummary> jobs_;
};

/// Several INSERTs planned and run as one job (Flink's StatementSet; the API form of `EXECUTE STATEMENT SET`):
/// they are optimized together, so INSERTs reading one table share one source and identical sub-plans
/// (`table.optimizer.reuse-sub-plan-enabled`, `table.optimizer.reuse-source-enabled`). Tables are resolved
/// against the environment's catalog and configuration when the set is explained or executed. Client thread
/// only, like its TableEnvironment.
class StatementSet {
 public:
  /// Adds one `INSERT INTO ... SELECT ...` (a trailing ';' is allowed). Throws SqlError with line:column
  /// in `statement` when it does not parse or is not exactly one INSERT, UserError when it is empty.
  StatementSet& addInsertSql(std::string statement);
  /// EXPLAIN of the job: the optimized plan, StreamGraph and JobGraph as text, or the JobGraph as Flink's
  /// JSON plan when `json`. Throws SqlError (line:column in the INSERT's own text) or UserError, also when
  /// the set is empty.
  std::string explain(bool json = false) const;
  /// Plans the INSERTs as one job, runs it to its end (a job summary is appended to the environment's
  /// jobs() and returned) and empties the set, as Flink's StatementSet#execute. Throws as explain().
  JobSummary execute();

 private:
  friend class TableEnvironment;
  explicit StatementSet(TableEnvironment& env) : env_(&env) {}
  TableEnvironment* env_;
  std::vector<std::string> statements_;
};

}  // namespace sluice::table
