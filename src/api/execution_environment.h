#pragma once
/// StreamExecutionEnvironment: the entry point of a DataStream program (Flink's
/// StreamExecutionEnvironment). It holds the job configuration and the Transformations the program
/// builds, compiles them with src/graph into a JobGraph and runs it on an embedded cluster::MiniCluster.
/// Threading: build the program on one thread; a JobClient may be used from any thread.

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/config.h"
#include "graph/transformation.h"
#include "runtime/operators/execution_scope.h"

namespace sluice::cluster {
class JobHandle;
struct JobExecutionResult;
}  // namespace sluice::cluster

namespace sluice::api {

template <typename T>
class DataStream;

/// Flink's RuntimeExecutionMode: STREAMING (pipelined, incremental results) or BATCH (bounded inputs,
/// blocking exchanges, keyed aggregations emit only final results, watermarks only at the end).
enum class RuntimeExecutionMode { STREAMING, BATCH };

/// The outcome of a finished job (Flink's JobExecutionResult).
class JobExecutionResult {
 public:
  JobExecutionResult() = default;
  JobExecutionResult(std::string job_id, std::string job_name, int64_t net_runtime_ms,
                     std::map<std::string, int64_t> accumulators, bool cancelled)
      : job_id_(std::move(job_id)), job_name_(std::move(job_name)), net_runtime_ms_(net_runtime_ms),
        accumulators_(std::move(accumulators)), cancelled_(cancelled) {}
  const std::string& getJobID() const { return job_id_; }
  const std::string& getJobName() const { return job_name_; }
  /// Wall time from start to the end of the last task, in ms.
  int64_t getNetRuntime() const { return net_runtime_ms_; }
  /// The merged value of accumulator `name` (a LongCounter); throws UserError when no subtask added it.
  int64_t getAccumulatorResult(const std::string& name) const;
  const std::map<std::string, int64_t>& getAllAccumulatorResults() const { return accumulators_; }
  /// True when the job was cancelled through its JobClient.
  bool wasCancelled() const { return cancelled_; }

 private:
  std::string job_id_;
  std::string job_name_;
  int64_t net_runtime_ms_ = 0;
  std::map<std::string, int64_t> accumulators_;
  bool cancelled_ = false;
};

/// A job started with executeAsync (Flink's JobClient). Thread-safe. Destroying a running client
/// cancels the job and waits for its threads.
class JobClient {
 public:
  /// `scopes`: where each execution attempt's accumulators and enumerators live (a restart gets a fresh
  /// scope); the result reads the last attempt's.
  JobClient(std::unique_ptr<cluster::JobHandle> handle, std::shared_ptr<runtime::ExecutionScopeSlot> scopes);
  ~JobClient();
  JobClient(const JobClient&) = delete;
  JobClient& operator=(const JobClient&) = delete;

  const std::string& getJobID() const;
  /// Asks every task to stop (returns at once).
  void cancel();
  /// Blocks until the job ends; returns its result or rethrows the first task failure (original type).
  JobExecutionResult getJobExecutionResult();
  /// Waits at most `timeout`; true when the job has ended.
  bool waitFor(std::chrono::milliseconds timeout);
  bool isDone() const;

 private:
  std::unique_ptr<cluster::JobHandle> handle_;
  std::shared_ptr<runtime::ExecutionScopeSlot> scopes_;
};

/// The DataStream program's environment.
class StreamExecutionEnvironment {
 public:
  /// An environment with the default configuration (Flink's getExecutionEnvironment for a local run).
  static StreamExecutionEnvironment getExecutionEnvironment();
  /// An environment with `config` (e.g. `-D` options: parallelism.default, execution.runtime-mode,
  /// taskmanager.numberOfTaskSlots, sluice.batch.size).
  explicit StreamExecutionEnvironment(Configuration config = Configuration());
  StreamExecutionEnvironment(StreamExecutionEnvironment&&) = default;

  /// Default parallelism of operators that set none (parallelism.default). Throws ConfigError when < 1.
  StreamExecutionEnvironment& setParallelism(int parallelism);
  int getParallelism() const;
  /// pipeline.max-parallelism: number of key groups. Throws ConfigError when < 1.
  StreamExecutionEnvironment& setMaxParallelism(int max_parallelism);
  /// execution.runtime-mode.
  StreamExecutionEnvironment& setRuntimeMode(RuntimeExecutionMode mode);
  RuntimeExecutionMode getRuntimeMode() const;
  /// Flink's enableCheckpointing: a checkpoint every `interval_ms` (execution.checkpointing.interval),
  /// EXACTLY_ONCE (aligned barriers) unless `at_least_once` (execution.checkpointing.mode). Other
  /// checkpoint options (dir, timeout, restart strategy, ...) are configuration keys. Throws ConfigError
  /// below 10 ms.
  StreamExecutionEnvironment& enableCheckpointing(int64_t interval_ms, bool at_least_once = false);
  /// pipeline.operator-chaining.enabled = false: every operator runs as its own task.
  StreamExecutionEnvironment& disableOperatorChaining();
  /// execution.buffer-timeout in ms (0: flush every batch; -1: only when full).
  StreamExecutionEnvironment& setBufferTimeout(int64_t ms);
  Configuration& getConfiguration() { return config_; }
  const Configuration& getConfig() const { return config_; }

  /// The numbers from..to inclusive (Flink's fromSequence / NumberSequenceSource), split into one
  /// contiguous range per subtask. Throws UserError when from > to.
  DataStream<int64_t> fromSequence(int64_t from, int64_t to);
  /// The given elements in order, from one subtask (Flink's fromElements / fromData: parallelism 1).
  template <typename T, typename... Ts>
  DataStream<T> fromElements(T first, Ts... rest);
  /// The elements of `values` in order, from one subtask.
  template <typename T>
  DataStream<T> fromCollection(std::vector<T> values);
  /// A FLIP-27 source with a watermark strategy (Flink's fromSource). `SourceT` derives from
  /// Source<T, Split>.
  template <typename SourceT, typename Strategy>
  DataStream<typename SourceT::OutputType> fromSource(std::shared_ptr<SourceT> source, const Strategy& watermarks,
                                                      const std::string& name);

  /// Compiles and runs the job on an embedded MiniCluster, blocking until it ends. Throws UserError when
  /// the program has no sink ("No operators defined in streaming topology"); rethrows a task's failure.
  /// Clears the program's sinks afterwards (as Flink does).
  JobExecutionResult execute(const std::string& job_name = "");
  /// Starts the job and returns at once.
  std::unique_ptr<JobClient> executeAsync(const std::string& job_name = "");
  /// The JobGraph as Flink's plan JSON (graph::jobGraphToJson): vertices, chaining, ship strategies.
  std::string getExecutionPlan(const std::string& job_name = "") const;

  /// Internal (DataStream): a new transformation with the next id.
  graph::TransformationPtr newTransformation(graph::TransformationKind kind, std::string name,
                                             std::vector<graph::TransformationPtr> inputs);
  /// Internal: registers a sink (what execute compiles).
  void addSink(graph::TransformationPtr sink) { sinks_.push_back(std::move(sink)); }
  /// Internal: where operators find the running execution's accumulators and enumerators.
  const std::shared_ptr<runtime::ExecutionScopeSlot>& scopeSlot() const { return scope_slot_; }
  bool isBatchMode() const { return getRuntimeMode() == RuntimeExecutionMode::BATCH; }

 private:
  std::vector<graph::TransformationPtr> takeSinks(const char* what);

  Configuration config_;
  std::vector<graph::TransformationPtr> sinks_;
  int next_id_ = 1;
  std::shared_ptr<runtime::ExecutionScopeSlot> scope_slot_ = std::make_shared<runtime::ExecutionScopeSlot>();
};

}  // namespace sluice::api
