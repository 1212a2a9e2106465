#include "cluster/mini_cluster.h"

#include <pthread.h>

#include <random>

#include <algorithm>
#include <filesystem>
#include <atomic>
#include <climits>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "cluster/job_metrics.h"
#include "common/error.h"
#include "runtime/network/blocking_subpartition.h"
#include "runtime/network/buffer_pool.h"
#include "runtime/network/input_gate.h"
#include "runtime/network/input_channel.h"
#include "runtime/checkpoint/channel_state_assignment.h"
#include "runtime/network/pipelined_subpartition.h"
#include "runtime/network/remote_input_channel.h"
#include "runtime/network/result_partition_manager.h"
#include "runtime/network/transport/tcp_connection_manager.h"
#include "runtime/network/network_config.h"
#include "runtime/network/stream_element_codec.h"
#include "runtime/checkpoint/checkpoint_coordinator.h"
#include "runtime/checkpoint/checkpoint_storage.h"
#include "runtime/checkpoint/state_assignment.h"
#include "runtime/state/state_backend_options.h"
#include "runtime/task/operator_chain.h"
#include "runtime/task/stream_task.h"
#include "scheduler/failover_strategy.h"
#include "scheduler/region_scheduler.h"
#include "scheduler/restart_strategy.h"

namespace sluice::cluster {

const char* jobStatusName(JobStatus s) {
  switch (s) {
    case JobStatus::kFinished: return "FINISHED";
    case JobStatus::kCanceled: return "CANCELED";
    case JobStatus::kFailed: return "FAILED";
  }
  return "?";
}

using Clock = std::chrono::steady_clock;

namespace {
void buildAttempt(JobHandle::State* st, const Configuration& cluster_config, const std::vector<char>* rebuild = nullptr);

std::string randomJobId() {
  std::random_device rd;
  std::mt19937_64 gen((static_cast<uint64_t>(rd()) << 32) ^ rd() ^
                      static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()));
  return fmt::format("{:016x}{:016x}", gen(), gen());
}

/// `ep` with its message prefixed by `prefix`, as the same type (a UserError stays a UserError, so the
/// restart strategy and the CLI treat it as before). Errors of other types become an InternalError.
std::exception_ptr withContext(std::exception_ptr ep, const std::string& prefix) {
  try {
    std::rethrow_exception(ep);
  } catch (const SqlError& e) {
    return std::make_exception_ptr(SqlError(prefix + e.what(), e.line(), e.column()));
  } catch (const InputError& e) {
    return std::make_exception_ptr(InputError(prefix + e.what()));
  } catch (const ConfigError& e) {
    return std::make_exception_ptr(ConfigError(prefix + e.what()));
  } catch (const UserError& e) {
    return std::make_exception_ptr(UserError(prefix + e.what()));
  } catch (const TransientError& e) {
    return std::make_exception_ptr(TransientError(prefix + e.what()));
  } catch (const InternalError& e) {
    return std::make_exception_ptr(InternalError(prefix + e.what()));
  } catch (const runtime::InjectedFailure& e) {
    return std::make_exception_ptr(runtime::InjectedFailure(prefix + e.what()));
  } catch (const SluiceError& e) {
    return std::make_exception_ptr(SluiceError(prefix + e.what()));
  } catch (const std::exception& e) {
    return std::make_exception_ptr(InternalError(prefix + e.what()));
  } catch (...) {
    return std::make_exception_ptr(InternalError(prefix + "unknown error"));
  }
}

std::string upperCase(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}
}

/// Everything a running job owns. Tasks and gates live until the handle is destroyed, after every
/// thread has been joined.
class JobHandle::State {
 public:
  graph::JobGraph job;
  Configuration config;
  Configuration cluster_config;
  SubmitOptions options;

  // Fault tolerance, across attempts. Declared first: destroyed after every task of the last attempt.
  std::unique_ptr<runtime::checkpoint::FsCheckpointStorage> checkpoint_storage;  // null: checkpoints in memory
  std::unique_ptr<runtime::checkpoint::CheckpointCoordinator> coordinator;        // null: BATCH (no snapshots)
  bool periodic_checkpointing = false;  // execution.checkpointing.interval set (STREAMING)
  std::unique_ptr<scheduler::RestartBackoffTimeStrategy> restart_strategy;
  std::vector<std::vector<runtime::checkpoint::TaskStateSnapshot>> restore;       // [vertex][subtask]; empty: none
  std::vector<std::vector<runtime::checkpoint::ChannelReplay>> replay;  // [vertex][subtask]: in-flight data to resend
  std::shared_ptr<const runtime::checkpoint::CompletedCheckpoint> initial_restore;  // execution.state-recovery.path
  runtime::FailureInjection failure_injection;
  int fail_attempts = 0;
  int num_restarts = 0;
  scheduler::FailoverStrategy failover_strategy = scheduler::FailoverStrategy::kRegion;
  bool region_failover = false;  // the region strategy
  std::vector<int> execution_attempts;  // per execution: Flink's attemptNumber (0 for the first run)
  std::vector<char> execution_running;  // per execution: its thread runs (under `mu`)
  std::vector<char> restarting;         // per execution: cancelled for a region failover (under `mu`)
  struct TaskFailure {
    int execution;
    std::exception_ptr error;
  };
  std::deque<TaskFailure> task_failures;  // region failover: failures for the master thread (under `mu`)
  std::vector<int> restart_regions;       // the region failover under way (under `mu`); empty: none
  bool full_restart_allowed = false;      // the restart strategy already allowed the restart of `failure`
  bool checkpoints_discarded = false;  // the retention deleted the job's checkpoints at its end
  std::atomic<int64_t> restored_in_flight_bytes{0};
  /// Guards the per-attempt vectors below against readers on other threads (progress, coordinator
  /// hooks) while an attempt is torn down and rebuilt.
  mutable std::mutex attempt_mu;
  int slots_required = 0;
  int slots_configured = 0;
  int task_managers = 1;
  int remote_channels = 0;
  std::unique_ptr<scheduler::ExecutionGraph> execution_graph;
  std::unique_ptr<scheduler::PipelinedRegionScheduler> scheduler;

  // The spill files of blocking results; removed when the job is done (runMaster) or, at the latest,
  // when the state goes (a submission that failed half way).
  std::unique_ptr<runtime::SpillDirectory> spill_directory;
  // Declared before everything holding buffers: destroyed last.
  std::vector<std::unique_ptr<runtime::network::NetworkBufferPool>> network_pools;  // per TaskManager
  /// The blocking results by (edge, producer subtask, consumer subtask), with the consumer's channel: a
  /// restarted consumer reads them again when its producer did not restart. Their read pools return
  /// segments to network_pools: declared after them, so a state dropped without teardown frees them first.
  struct BlockingLink {
    std::shared_ptr<runtime::BlockingSubpartition> subpartition;
    int channel = 0;
  };
  std::map<std::tuple<int, int, int>, BlockingLink> blocking_links;
  /// A channel between two TaskManagers of the current attempt, with the partition it reads: a region
  /// failover releases those of its vertices on both transports before their tasks go.
  struct RemoteLink {
    int producer_vertex = 0;
    int consumer_vertex = 0;
    int producer_tm = 0;
    int consumer_tm = 0;
    std::string partition_id;
    std::shared_ptr<runtime::RemoteInputChannel> channel;
  };
  std::vector<RemoteLink> remote_links;  // holds buffers of network_pools: declared after them
  // Receiver ids never repeat within an attempt's transports: after a region restart, frames for the old
  // channels may still be on the wire.
  uint64_t next_receiver = 0;
  // Result partitions' pools (owned by the producer vertex) and gates' floating pools (by the consumer).
  std::vector<std::pair<int, std::shared_ptr<runtime::network::LocalBufferPool>>> partition_pools;
  std::vector<std::unique_ptr<runtime::ResultPartitionManager>> partition_managers;  // per TaskManager (N > 1)
  std::vector<std::vector<std::unique_ptr<runtime::InputGate>>> gates;   // [vertex][subtask]
  std::vector<std::vector<std::unique_ptr<runtime::StreamTask>>> tasks;  // [vertex][subtask]
  std::vector<std::unique_ptr<std::atomic<int>>> finished;               // per vertex
  // Per TaskManager when there are several; declared after the gates and tasks so the I/O threads stop
  // before the channels they feed are destroyed.
  std::vector<std::unique_ptr<runtime::network::TcpConnectionManager>> transports;
  std::vector<std::thread> threads;  // per execution; started by the master thread only
  std::thread master;
  std::thread monitor;

  mutable std::mutex mu;
  std::condition_variable cv;
  int running = 0;
  std::deque<std::pair<int, bool>> ended;  // (execution, finished successfully), for the master thread
  bool done = false;
  bool cancel_requested = false;
  std::exception_ptr failure;
  Clock::time_point start_time;
  Clock::time_point end_time;

  std::mutex join_mu;
  bool joined = false;

  void cancelAll() {
    std::lock_guard<std::mutex> attempt_lock(attempt_mu);
    for (auto& per_vertex : tasks) {
      for (auto& t : per_vertex) t->cancel();
    }
    for (auto& per_vertex : gates) {
      for (auto& g : per_vertex) {
        if (g) g->cancel();
      }
    }
    // Producers waiting for a free buffer throw CancelTaskException.
    for (auto& [vertex, p] : partition_pools) p->destroy();
  }

  /// Region failover: cancels the tasks of `vertices` (flags per vertex), their gates and the pools they
  /// own. Regions only meet through blocking results, so no other task waits on them.
  void cancelVertices(const std::vector<char>& vertices) {
    std::lock_guard<std::mutex> attempt_lock(attempt_mu);
    for (size_t v = 0; v < tasks.size(); ++v) {
      if (!vertices[v]) continue;
      for (auto& t : tasks[v]) t->cancel();
      for (auto& g : gates[v]) {
        if (g) g->cancel();
      }
    }
    for (auto& [vertex, p] : partition_pools) {
      if (vertices[static_cast<size_t>(vertex)]) p->destroy();
    }
  }

  /// A savepoint of `kind` (JobHandle::triggerSavepoint / stopWithSavepoint).
  std::string savepoint(runtime::checkpoint::CheckpointKind kind, const std::string& target_dir,
                        std::chrono::milliseconds timeout);

  void requestCancel() {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (done) return;
      cancel_requested = true;
    }
    cancelAll();
    cv.notify_all();
  }

  // A data connection failed (transport I/O thread). After the job is done, connections closing during
  // shutdown are not failures.
  void onTransportFailure(std::exception_ptr ep) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (done) return;
    }
    onFailure(std::move(ep));
  }

  void onFailure(std::exception_ptr ep) {
    bool first = false;
    {
      std::lock_guard<std::mutex> lock(mu);
      if (!failure && !cancel_requested) {
        failure = ep;
        first = true;
      }
    }
    if (first) cancelAll();
    cv.notify_all();
  }

  /// A task failed. With region failover the master thread decides what restarts (failures of tasks
  /// that a region failover is cancelling are not new failures); otherwise the whole job fails over.
  void onTaskFailure(int execution, std::exception_ptr ep) {
    if (!region_failover) {
      onFailure(std::move(ep));
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      if (failure || cancel_requested || restarting[static_cast<size_t>(execution)]) return;
      task_failures.push_back(TaskFailure{execution, std::move(ep)});
    }
    cv.notify_all();
  }

  void runTask(int execution) {
    const scheduler::ExecutionVertex& ev = execution_graph->executions()[static_cast<size_t>(execution)];
    runtime::StreamTask& task = *tasks[static_cast<size_t>(ev.vertex)][static_cast<size_t>(ev.subtask)];
    const std::string thread_name = task.name().substr(0, 15);
    pthread_setname_np(pthread_self(), thread_name.c_str());
    bool finished_ok = false;
    try {
      task.invoke();
      finished[static_cast<size_t>(ev.vertex)]->fetch_add(1, std::memory_order_relaxed);
      finished_ok = true;
    } catch (const runtime::CancelTaskException&) {
    } catch (...) {
      // Flink's "<task> (2/4) switched from RUNNING to FAILED": the error names the subtask it came from.
      onTaskFailure(execution, withContext(std::current_exception(), task.name() + " failed: "));
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      ended.emplace_back(execution, finished_ok);
      execution_running[static_cast<size_t>(execution)] = 0;
      --running;
    }
    cv.notify_all();
  }

  // Caller holds `mu`.
  void deploy(const std::vector<int>& executions) {
    for (int ex : executions) {
      std::thread& t = threads[static_cast<size_t>(ex)];
      if (t.joinable()) t.join();  // an earlier attempt of a restarted region (ended)
      t = std::thread([this, ex] { runTask(ex); });
      execution_running[static_cast<size_t>(ex)] = 1;
      ++running;  // only once the thread exists, so a failed start cannot leave the count waiting
    }
  }

  /// Reads the checkpointing, restart and recovery options; creates the coordinator and the restart
  /// strategy, and loads the checkpoint or savepoint of `execution.state-recovery.path`. Every STREAMING job
  /// gets a coordinator, so it can take savepoints (Flink builds one for every streaming job and disables
  /// only its periodic trigger without an interval); it triggers checkpoints periodically, and the job keeps
  /// them in `execution.checkpointing.dir`, only with `execution.checkpointing.interval`. Throws
  /// ConfigError / InputError (a missing or corrupt checkpoint names its path).
  void configureFaultTolerance() {
    namespace ck = runtime::checkpoint;
    const bool streaming = job.runtime_mode != graph::RuntimeMode::kBatch;
    const bool checkpointing = streaming && config.getOptional(options::kCheckpointingInterval).value_or(0) > 0;
    periodic_checkpointing = checkpointing;
    restart_strategy = scheduler::RestartBackoffTimeStrategy::fromConfiguration(config, checkpointing);
    failure_injection.operator_name = config.getOptional(options::kTestFailOperator).value_or("");
    failure_injection.after_records = config.get(options::kTestFailAfterRecords);
    failure_injection.subtask = config.get(options::kTestFailSubtask);
    fail_attempts = config.get(options::kTestFailAttempts);
    failover_strategy = scheduler::parseFailoverStrategy(config.get(options::kFailoverStrategy));
    region_failover = failover_strategy == scheduler::FailoverStrategy::kRegion;
    failure_injection.after_completed_checkpoint = checkpointing;
    if (const std::optional<std::string> path = config.getOptional(options::kSavepointPath); path && !path->empty()) {
      initial_restore = std::make_shared<const ck::CompletedCheckpoint>(ck::FsCheckpointStorage::load(*path));
      assignRestore(*initial_restore);
    }
    if (!streaming) return;
    ck::CheckpointCoordinatorConfiguration cc;
    // 0: savepoints only (the coordinator's periodic trigger stays off).
    cc.interval_ms = checkpointing ? *config.getOptional(options::kCheckpointingInterval) : 0;
    // FLIP-309: unset = the interval; 0 = none during backlog; otherwise at least the interval. It tunes the
    // periodic trigger, so without an interval it is not read.
    if (checkpointing) cc.interval_during_backlog_ms = config.getOptional(options::kCheckpointingIntervalDuringBacklog);
    if (cc.interval_during_backlog_ms && *cc.interval_during_backlog_ms != 0 &&
        *cc.interval_during_backlog_ms < cc.interval_ms) {
      throw ConfigError(fmt::format("Configuration key '{}': {} ms must be 0 (no checkpoints during backlog) or at "
                                    "least '{}' ({} ms)",
                                    options::kCheckpointingIntervalDuringBacklog.key(), *cc.interval_during_backlog_ms,
                                    options::kCheckpointingInterval.key(), cc.interval_ms));
    }
    cc.timeout_ms = config.get(options::kCheckpointingTimeout);
    cc.min_pause_ms = config.get(options::kMinPauseBetweenCheckpoints);
    cc.max_concurrent = config.get(options::kMaxConcurrentCheckpoints);
    cc.tolerable_failures = config.get(options::kTolerableFailureNumber);
    cc.alignment = upperCase(config.get(options::kCheckpointingConsistencyMode)) == "AT_LEAST_ONCE" ? ck::AlignmentType::kAtLeastOnce
                                                                                : ck::AlignmentType::kAligned;
    // Unaligned checkpoints (FLIP-76); AT_LEAST_ONCE ignores the setting, as Flink.
    if (config.get(options::kEnableUnaligned) && cc.alignment == ck::AlignmentType::kAligned) {
      if (cc.max_concurrent > 1) {
        throw ConfigError(fmt::format("Configuration key '{}': unaligned checkpoints need '{}' = 1 (it is {})",
                                      options::kEnableUnaligned.key(), options::kMaxConcurrentCheckpoints.key(),
                                      cc.max_concurrent));
      }
      cc.unaligned = true;
      cc.aligned_checkpoint_timeout_ms = config.get(options::kAlignedCheckpointTimeout);
    }
    const std::string dir = config.getOptional(options::kCheckpointsDirectory).value_or("");
    const std::string savepoint_dir = config.getOptional(options::kSavepointDirectory).value_or("");
    if (checkpointing && !dir.empty()) {
      checkpoint_storage = std::make_unique<ck::FsCheckpointStorage>(dir, job.job_id,
                                                                     config.get(options::kMaxRetainedCheckpoints), savepoint_dir);
    }
    ck::CheckpointCoordinator::Hooks hooks;
    hooks.trigger_task = [this](int v, int s, const ck::CheckpointBarrier& b) {
      std::lock_guard<std::mutex> lock(attempt_mu);
      if (static_cast<size_t>(v) < tasks.size() && static_cast<size_t>(s) < tasks[static_cast<size_t>(v)].size()) {
        tasks[static_cast<size_t>(v)][static_cast<size_t>(s)]->triggerCheckpoint(b);
      }
    };
    hooks.notify_complete = [this](int64_t id) {
      std::lock_guard<std::mutex> lock(attempt_mu);
      for (auto& per_vertex : tasks) {
        for (auto& t : per_vertex) t->notifyCheckpointComplete(id);
      }
    };
    hooks.notify_aborted = [this](int64_t id) {
      std::lock_guard<std::mutex> lock(attempt_mu);
      for (auto& per_vertex : tasks) {
        for (auto& t : per_vertex) t->notifyCheckpointAborted(id);
      }
    };
    hooks.store = [this, savepoint_dir](const ck::CompletedCheckpoint& c, const std::string& target) -> std::string {
      if (ck::isSavepoint(c.kind)) {
        if (checkpoint_storage) return checkpoint_storage->storeSavepoint(c, target);
        // No checkpoint storage (no interval, or checkpoints kept in memory): a savepoint needs only its
        // target directory.
        const std::string into = target.empty() ? savepoint_dir : target;
        if (into.empty()) {
          throw ConfigError(fmt::format("A savepoint needs a directory: give one or set '{}'",
                                        options::kSavepointDirectory.key()));
        }
        return ck::FsCheckpointStorage::storeSavepointInto(c, job.job_id, into);
      }
      return checkpoint_storage ? checkpoint_storage->store(c) : std::string();
    };
    hooks.fail_job = [this](const std::string& reason) {
      onFailure(std::make_exception_ptr(UserError(reason)));
    };
    coordinator = std::make_unique<ck::CheckpointCoordinator>(job, job.job_id, cc, std::move(hooks));
    if (initial_restore) coordinator->setNextCheckpointId(initial_restore->checkpoint_id + 1);
  }

  /// Sets `restore` (the state of each subtask from `checkpoint`, rescaled by key group / redistributed)
  /// and `replay` (the in-flight data each subtask resends, unaligned checkpoints).
  void assignRestore(const runtime::checkpoint::CompletedCheckpoint& checkpoint) {
    replay = runtime::checkpoint::assignChannelState(checkpoint, job, config.get(options::kSavepointIgnoreUnclaimedState));
    for (const auto& per_vertex : replay) {
      for (const auto& subtask : per_vertex) restored_in_flight_bytes += subtask.bytes();
    }
    restore = assignStates(checkpoint);
  }

  std::vector<std::vector<runtime::checkpoint::TaskStateSnapshot>> assignStates(
      const runtime::checkpoint::CompletedCheckpoint& checkpoint) const {
    namespace ck = runtime::checkpoint;
    std::map<std::string, ck::OperatorParallelism> ops;
    for (const graph::JobVertex& v : job.vertices) {
      for (const graph::ChainedOperator& op : v.operators) {
        ops[op.uid.empty() ? op.name : op.uid] = ck::OperatorParallelism{v.parallelism, v.max_parallelism};
      }
    }
    const ck::StateAssignment assignment =
        ck::assignStates(checkpoint, ops, config.get(options::kSavepointIgnoreUnclaimedState));
    std::vector<std::vector<ck::TaskStateSnapshot>> out(job.vertices.size());
    for (size_t v = 0; v < job.vertices.size(); ++v) {
      const graph::JobVertex& vertex = job.vertices[v];
      out[v].resize(static_cast<size_t>(vertex.parallelism));
      for (const graph::ChainedOperator& op : vertex.operators) {
        const std::string uid = op.uid.empty() ? op.name : op.uid;
        auto it = assignment.find(uid);
        if (it == assignment.end()) continue;
        for (int s = 0; s < vertex.parallelism; ++s) {
          const ck::OperatorSubtaskState& state = it->second[static_cast<size_t>(s)];
          if (!state.empty()) out[v][static_cast<size_t>(s)].emplace(uid, state);
        }
      }
    }
    return out;
  }

  /// Destroys the tasks, gates, buffers and transports of the attempt that ended (every task thread has
  /// returned). The order mirrors the members' destruction order.
  void teardownAttempt() {
    std::lock_guard<std::mutex> lock(attempt_mu);
    for (auto& t : threads) {
      if (t.joinable()) t.join();
    }
    threads.clear();
    for (auto& t : transports) t->shutdown();
    transports.clear();
    tasks.clear();
    gates.clear();
    remote_links.clear();
    partition_managers.clear();
    partition_pools.clear();
    blocking_links.clear();
    network_pools.clear();
    if (spill_directory) spill_directory->remove();
    spill_directory.reset();
    finished.clear();
    ended.clear();
    scheduler.reset();
    execution_graph.reset();
  }

  /// Region failover: joins the ended threads of `vertices` and destroys their tasks, gates and pools
  /// (the other vertices keep running).
  void teardownVertices(const std::vector<char>& vertices) {
    releaseRemoteLinks(vertices);
    std::lock_guard<std::mutex> lock(attempt_mu);
    for (size_t v = 0; v < tasks.size(); ++v) {
      if (!vertices[v]) continue;
      for (int s = 0; s < job.vertices[v].parallelism; ++s) {
        std::thread& t = threads[static_cast<size_t>(execution_graph->executionIndex(static_cast<int>(v), s))];
        if (t.joinable()) t.join();
      }
      tasks[v].clear();
      for (auto& g : gates[v]) g.reset();
      finished[v]->store(0, std::memory_order_relaxed);
    }
    std::erase_if(partition_pools, [&](const auto& p) { return vertices[static_cast<size_t>(p.first)] != 0; });
  }

  /// Region failover over several TaskManagers: the transports forget the TCP channels of `vertices`
  /// (Flink's CancelPartitionRequest and releasePartition): the consumers' side drops what is still on the
  /// wire for them, the producers' side stops serving their partitions, so nothing reaches a channel or
  /// subpartition about to be destroyed and the connections, which the running regions share, stay up. A
  /// pipelined channel never leaves its region, so both ends restart. Called without `attempt_mu`: it
  /// waits for the I/O threads, which take it when a connection fails (cancelAll).
  void releaseRemoteLinks(const std::vector<char>& vertices) {
    std::map<int, std::vector<runtime::network::InputChannelId>> receivers;  // by consumer TaskManager
    std::map<int, std::set<std::string>> partitions;                         // by producer TaskManager
    auto restarting_link = [&](const RemoteLink& l) {
      return vertices[static_cast<size_t>(l.consumer_vertex)] != 0 || vertices[static_cast<size_t>(l.producer_vertex)] != 0;
    };
    for (const RemoteLink& l : remote_links) {
      if (!restarting_link(l)) continue;
      receivers[l.consumer_tm].push_back(l.channel->id());
      partitions[l.producer_tm].insert(l.partition_id);
    }
    for (const auto& [tm, ids] : receivers) transports[static_cast<size_t>(tm)]->releaseInputChannels(ids);
    for (const auto& [tm, ids] : partitions) {
      transports[static_cast<size_t>(tm)]->releasePartitions(std::vector<std::string>(ids.begin(), ids.end()));
    }
    std::erase_if(remote_links, restarting_link);
  }

  /// After a failure: true when the restart strategy allows another attempt (it records the failure).
  bool mayRestart(const std::exception_ptr& error) {
    if (!restart_strategy || cancel_requested) return false;
    // A user's error (bad SQL, a malformed row, bad configuration, a source that cannot checkpoint) fails
    // again on every attempt; peers, connections and injected failures are worth a restart.
    try {
      std::rethrow_exception(error);
    } catch (const UserError&) {
      return false;
    } catch (...) {
    }
    restart_strategy->notifyFailure(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch()).count());
    return restart_strategy->canRestart();
  }

  /// Runs the next attempt after a failover (the master thread, `mu` not held): waits the backoff,
  /// restores every task from the latest completed checkpoint (or the initial savepoint), redeploys.
  /// Returns false when the job was cancelled meanwhile or the new attempt cannot be built.
  bool restartAttempt(std::unique_lock<std::mutex>& lock) {
    const auto backoff = std::chrono::milliseconds(restart_strategy->getBackoffTime());
    lock.unlock();
    if (coordinator) coordinator->suspend();
    teardownAttempt();
    lock.lock();
    if (cv.wait_for(lock, backoff, [&] { return cancel_requested; })) {
      // Cancelled while restarting: the job is CANCELED (Flink's RESTARTING -> CANCELED), not failed.
      failure = nullptr;
      return false;
    }
    failure = nullptr;
    restart_regions.clear();
    task_failures.clear();
    for (int& a : execution_attempts) ++a;
    ++num_restarts;
    lock.unlock();
    bool ok = true;
    try {
      std::shared_ptr<const runtime::checkpoint::CompletedCheckpoint> latest =
          coordinator ? coordinator->latestCompletedCheckpoint() : nullptr;
      if (!latest) latest = initial_restore;
      if (latest) {
        assignRestore(*latest);
      } else {
        restore.clear();
        replay.clear();
      }
      if (options.on_new_attempt) options.on_new_attempt();
      {
        std::lock_guard<std::mutex> attempt_lock(attempt_mu);
        buildAttempt(this, cluster_config);
      }
      // Only now: a checkpoint triggered before the new tasks existed would wait for them forever.
      if (coordinator) coordinator->restartAttempt();
    } catch (...) {
      ok = false;
      lock.lock();
      failure = std::current_exception();
      return false;
    }
    lock.lock();
    return ok;
  }

  // The JobMaster: deploys regions as the scheduler decides, collects ended subtasks, fails the job when
  // slots do not arrive in time, and marks the job done once no subtask runs and none will be deployed.
  // A failure restarts the job from its latest checkpoint while the restart strategy allows it (a full
  // restart: Flink's region failover restarts the same set when every exchange is all-to-all).
  void runMaster() {
    std::unique_lock<std::mutex> lock(mu);
    if (coordinator) coordinator->start();
    while (true) {
      runAttempt(lock);
      if (failure != nullptr && !cancel_requested && (full_restart_allowed || mayRestart(failure))) {
        full_restart_allowed = false;
        if (restartAttempt(lock)) continue;
      }
      break;
    }
    const bool failed = failure != nullptr;
    const bool cancelled = cancel_requested && !failed;
    lock.unlock();
    if (coordinator) coordinator->stop();
    discardCheckpointsOnEnd(failed, cancelled);
    lock.lock();
    finishMaster(lock);
  }

  /// Flink's externalized-checkpoint-retention: checkpoints are deleted when the job finishes; kept when it
  /// failed (DELETE_ON_CANCELLATION, RETAIN_ON_CANCELLATION) or was cancelled (RETAIN_ON_CANCELLATION).
  /// A process killed outright keeps them all.
  void discardCheckpointsOnEnd(bool failed, bool cancelled) {
    if (!checkpoint_storage) return;
    const std::string retention = upperCase(config.get(options::kExternalizedCheckpointRetention));
    bool keep = false;
    if (failed) keep = retention != "NO_EXTERNALIZED_CHECKPOINTS";
    else if (cancelled) keep = retention == "RETAIN_ON_CANCELLATION";
    if (keep) return;
    checkpoints_discarded = true;
    try {
      for (int64_t id : checkpoint_storage->completedCheckpointIds()) checkpoint_storage->discard(id);
      // No checkpoint is left to reference the incremental files: shared/ and taskowned/ are emptied.
      for (const char* sub : {"shared", "taskowned"}) {
        std::error_code ec;
        const std::filesystem::path dir = std::filesystem::path(checkpoint_storage->jobDirectory()) / sub;
        for (const auto& e : std::filesystem::directory_iterator(dir, ec)) std::filesystem::remove_all(e.path(), ec);
      }
    } catch (...) {
      // Leftover checkpoint files do not change the job's outcome.
    }
  }

  /// Per vertex: 1 when one of `regions` holds it.
  std::vector<char> verticesOf(const std::vector<int>& regions) const {
    std::vector<char> vertices(job.vertices.size(), 0);
    for (int r : regions) {
      for (int v : execution_graph->regions()[static_cast<size_t>(r)].vertices) vertices[static_cast<size_t>(v)] = 1;
    }
    return vertices;
  }

  /// Caller holds `mu`. True when no task of the region failover under way runs any more.
  bool regionsEnded() const {
    for (int r : restart_regions) {
      for (int ex : execution_graph->regions()[static_cast<size_t>(r)].executions) {
        if (execution_running[static_cast<size_t>(ex)]) return false;
      }
    }
    return true;
  }

  /// Caller holds `mu` (released meanwhile). The master's answer to a task failure with region failover
  /// (Flink's DefaultScheduler.handleTaskFailure): the restart strategy decides whether to restart at
  /// all; the failover strategy which regions. All of them: the attempt ends and runMaster restarts the
  /// job as a whole. Some: their tasks are cancelled (the others keep running and checkpointing stops
  /// until they are back), and restartRegions follows once they all ended.
  void handleTaskFailure(std::unique_lock<std::mutex>& lock) {
    TaskFailure f = std::move(task_failures.front());
    task_failures.pop_front();
    const int region = execution_graph->executions()[static_cast<size_t>(f.execution)].region;
    const std::vector<int> regions = scheduler::regionsToRestart(*execution_graph, region, failover_strategy, [&](int e) {
      // A blocking result is there to read again once its producer finished: spill files stay until the
      // job ends.
      const int producer = job.edges[static_cast<size_t>(e)].source_vertex;
      return finished[static_cast<size_t>(producer)]->load(std::memory_order_relaxed) ==
             job.vertices[static_cast<size_t>(producer)].parallelism;
    });
    const bool allowed = mayRestart(f.error);
    if (!allowed || regions.size() == execution_graph->regions().size()) {
      failure = std::move(f.error);
      full_restart_allowed = allowed;
      task_failures.clear();
      lock.unlock();
      cancelAll();
      lock.lock();
      return;
    }
    restart_regions = regions;
    for (int r : regions) {
      for (int ex : execution_graph->regions()[static_cast<size_t>(r)].executions) restarting[static_cast<size_t>(ex)] = 1;
    }
    // Failures of tasks that restart now are covered by this failover.
    std::erase_if(task_failures, [&](const TaskFailure& t) { return restarting[static_cast<size_t>(t.execution)] != 0; });
    lock.unlock();
    // Flink stops the checkpoint scheduler on failover; the restarted tasks restore from a completed one.
    if (coordinator) coordinator->suspend();
    cancelVertices(verticesOf(regions));
    lock.lock();
  }

  /// Caller holds `mu` (released meanwhile); every task of `restart_regions` has ended. Destroys their
  /// tasks, waits the backoff, restores them from the latest completed checkpoint (their operators'
  /// state only; the running regions are not touched) and deploys them again (Flink's
  /// restartTasksWithDelay). A cancel during the backoff ends the job as CANCELED.
  void restartRegions(std::unique_lock<std::mutex>& lock) {
    namespace ck = runtime::checkpoint;
    const std::vector<int> regions = restart_regions;
    const std::vector<char> vertices = verticesOf(regions);
    const auto backoff = std::chrono::milliseconds(restart_strategy->getBackoffTime());
    lock.unlock();
    teardownVertices(vertices);
    lock.lock();
    if (cv.wait_for(lock, backoff, [&] { return cancel_requested || failure != nullptr; })) return;
    ++num_restarts;  // Flink's numRestarts counts region restarts too
    for (int r : regions) {
      for (int ex : execution_graph->regions()[static_cast<size_t>(r)].executions) {
        ++execution_attempts[static_cast<size_t>(ex)];
        restarting[static_cast<size_t>(ex)] = 0;
      }
    }
    lock.unlock();
    std::shared_ptr<const ck::CompletedCheckpoint> latest = coordinator ? coordinator->latestCompletedCheckpoint() : nullptr;
    if (!latest) latest = initial_restore;
    std::vector<std::vector<ck::TaskStateSnapshot>> assigned;
    std::vector<std::vector<ck::ChannelReplay>> assigned_replay;  // [vertex][subtask], always full size
    if (latest) {
      assigned = assignStates(*latest);
      assigned_replay = ck::assignChannelState(*latest, job, config.get(options::kSavepointIgnoreUnclaimedState));
    }
    if (options.on_region_restart) {
      std::vector<int> node_ids;
      for (size_t v = 0; v < job.vertices.size(); ++v) {
        if (!vertices[v]) continue;
        for (const graph::ChainedOperator& op : job.vertices[v].operators) node_ids.push_back(op.node_id);
      }
      options.on_region_restart(node_ids);
    }
    {
      std::lock_guard<std::mutex> attempt_lock(attempt_mu);
      // Running tasks point into `restore` only when it was filled before they were built.
      if (restore.empty() && latest) {
        restore.resize(job.vertices.size());
        for (size_t v = 0; v < job.vertices.size(); ++v) restore[v].resize(static_cast<size_t>(job.vertices[v].parallelism));
      }
      for (size_t v = 0; v < restore.size(); ++v) {
        if (vertices[v]) restore[v] = latest ? assigned[v] : std::vector<ck::TaskStateSnapshot>(restore[v].size());
      }
      // The same for in-flight data: the restarted producers resend what their channels held.
      if (replay.empty() && !assigned_replay.empty()) {
        replay.resize(job.vertices.size());
        for (size_t v = 0; v < job.vertices.size(); ++v) replay[v].resize(static_cast<size_t>(job.vertices[v].parallelism));
      }
      for (size_t v = 0; v < replay.size(); ++v) {
        if (vertices[v]) {
          replay[v] = assigned_replay.empty() ? std::vector<ck::ChannelReplay>(replay[v].size()) : assigned_replay[v];
        }
      }
      buildAttempt(this, cluster_config, &vertices);
    }
    std::vector<int> restarted_vertices;
    for (size_t v = 0; v < vertices.size(); ++v) {
      if (vertices[v]) restarted_vertices.push_back(static_cast<int>(v));
    }
    // Only now: a checkpoint triggered before the new tasks existed would wait for them forever.
    if (coordinator) coordinator->restartTasks(restarted_vertices);
    lock.lock();
    restart_regions.clear();
    deploy(scheduler->restartRegions(regions, Clock::now()));
  }

  void runAttempt(std::unique_lock<std::mutex>& lock) {
    // Scheduling errors (a thread that cannot start, a broken invariant) fail the job like a task failure.
    auto guarded = [&](auto&& fn) {
      try {
        fn();
      } catch (...) {
        if (!failure) failure = std::current_exception();
        lock.unlock();
        cancelAll();
        lock.lock();
      }
    };
    guarded([&] { deploy(scheduler->start(Clock::now())); });
    while (true) {
      const bool stopping = failure != nullptr || cancel_requested;
      while (!ended.empty()) {
        const auto [execution, ok] = ended.front();
        ended.pop_front();
        if (ok && !stopping && !restarting[static_cast<size_t>(execution)]) {
          guarded([&, ex = execution] { deploy(scheduler->onExecutionFinished(ex, Clock::now())); });
        } else {
          scheduler->onExecutionEnded(execution);
        }
      }
      if (!stopping && !restart_regions.empty() && regionsEnded()) {
        guarded([&] { restartRegions(lock); });
        continue;
      }
      if (!stopping && restart_regions.empty() && !task_failures.empty()) {
        guarded([&] { handleTaskFailure(lock); });
        continue;
      }
      if (stopping || scheduler->isFinished()) {
        if (running == 0) break;
        cv.wait(lock, [&] { return !ended.empty(); });
        continue;
      }
      bool timed_out = false;
      guarded([&] {
        timed_out = true;
        scheduler->checkSlotRequestTimeouts(Clock::now());
        timed_out = false;
      });
      if (timed_out) continue;
      const std::optional<Clock::time_point> deadline = scheduler->nextTimeout();
      auto wake = [&] {
        return !ended.empty() || failure != nullptr || cancel_requested ||
               (restart_regions.empty() && !task_failures.empty());
      };
      if (deadline) {
        cv.wait_until(lock, *deadline, wake);
      } else {
        cv.wait(lock, wake);
      }
    }
  }

  void finishMaster(std::unique_lock<std::mutex>& lock) {
    // Every subtask has ended: the blocking results are no longer needed, whatever the outcome.
    if (spill_directory) spill_directory->remove();
    done = true;
    end_time = Clock::now();
    lock.unlock();
    cv.notify_all();
  }

  void runMonitor() {
    std::unique_lock<std::mutex> lock(mu);
    JobProgress last;
    bool have_last = false;
    while (!done) {
      if (cv.wait_for(lock, options.progress_interval, [&] { return done; })) break;
      lock.unlock();
      try {
        // Rates over the last interval, as Flink's per-second gauges show recent load.
        JobProgress now = progress(have_last ? &last : nullptr);
        options.on_progress(now);
        last = std::move(now);
        have_last = true;
      } catch (...) {
        // A failing progress printer must not take the job down.
      }
      lock.lock();
    }
  }

  /// Rates over the window since `previous` (an earlier snapshot of this job), else over each subtask's
  /// running time.
  JobProgress progress(const JobProgress* previous = nullptr) const {
    JobProgress p;
    std::vector<int> attempts;
    {
      std::lock_guard<std::mutex> lock(mu);
      p.elapsed_ms = std::chrono::duration_cast<std::chrono::milliseconds>((done ? end_time : Clock::now()) - start_time)
                         .count();
      p.num_restarts = num_restarts;
      attempts = execution_attempts;
    }
    if (coordinator) {
      // Without periodic checkpoints the figures say nothing until a checkpoint was taken (savepoints are
      // not counted in them): the summary and /jobs/:id/checkpoints leave them out, as before.
      runtime::checkpoint::CheckpointStats stats = coordinator->stats();
      if (periodic_checkpointing || stats.number_of_completed_checkpoints > 0 || stats.number_of_failed_checkpoints > 0) {
        p.checkpoints = std::move(stats);
      }
    }
    std::lock_guard<std::mutex> attempt_lock(attempt_mu);
    for (size_t v = 0; v < job.vertices.size(); ++v) {
      const graph::JobVertex& vertex = job.vertices[v];
      VertexProgress vp;
      vp.vertex_id = vertex.id;
      vp.name = vertex.name;
      vp.parallelism = vertex.parallelism;
      vp.finished_subtasks = finished[v]->load(std::memory_order_relaxed);
      vp.operators.resize(vertex.operators.size());
      for (size_t i = 0; i < vertex.operators.size(); ++i) {
        vp.operators[i].node_id = vertex.operators[i].node_id;
        vp.operators[i].name = vertex.operators[i].name;
      }
      for (const auto& t : tasks[v]) {
        for (size_t i = 0; i < vertex.operators.size(); ++i) {
          const runtime::OperatorMetrics& m = t->operatorMetrics(i);
          vp.operators[i].records_in += m.num_records_in.load(std::memory_order_relaxed);
          vp.operators[i].records_out += m.num_records_out.load(std::memory_order_relaxed);
          const int64_t outages = m.num_connection_outages.load(std::memory_order_relaxed);
          vp.operators[i].connection_outages += outages;
          vp.connection_outages += outages;
          const int64_t late = m.num_late_records_dropped.load(std::memory_order_relaxed);
          vp.operators[i].late_records_dropped += late;
          vp.operators[i].sorting_subtasks += m.sorting_input.load(std::memory_order_relaxed) != 0 ? 1 : 0;
          vp.operators[i].records_sorted += m.num_records_sorted.load(std::memory_order_relaxed);
          vp.operators[i].bytes_spilled += m.num_bytes_spilled.load(std::memory_order_relaxed);
          vp.operators[i].backlog_subtasks += m.backlog.load(std::memory_order_relaxed) != 0 ? 1 : 0;
          vp.late_records_dropped += late;
        }
        SubtaskProgress sp;
        sp.subtask = t->subtaskIndex();
        sp.name = t->name();
        const auto ex = static_cast<size_t>(execution_graph->executionIndex(static_cast<int>(v), sp.subtask));
        sp.attempt = ex < attempts.size() ? attempts[ex] : 0;
        sp.io = t->ioMetrics();
        const SubtaskProgress* before = nullptr;
        if (previous != nullptr && v < previous->vertices.size() &&
            static_cast<size_t>(sp.subtask) < previous->vertices[v].subtasks.size()) {
          before = &previous->vertices[v].subtasks[static_cast<size_t>(sp.subtask)];
        }
        computeRates(sp, before);
        vp.records_out += sp.io.num_records_out;
        vp.subtasks.push_back(std::move(sp));
      }
      aggregateSubtasks(vp);
      vp.records_in = vp.operators.empty() ? 0 : vp.operators[0].records_in;
      p.vertices.push_back(std::move(vp));
    }
    return p;
  }

  void joinAll() {
    std::lock_guard<std::mutex> lock(join_mu);
    if (joined) return;
    // The master starts task threads; once it is joined `threads` no longer changes.
    if (master.joinable()) master.join();
    for (auto& t : threads) {
      if (t.joinable()) t.join();
    }
    if (monitor.joinable()) monitor.join();
    for (auto& t : transports) t->shutdown();
    joined = true;
  }
};

JobHandle::JobHandle(std::shared_ptr<State> state) : state_(std::move(state)) {}

JobHandle::~JobHandle() {
  if (!isDone()) state_->requestCancel();
  state_->joinAll();
}

void JobHandle::cancel() { state_->requestCancel(); }

bool JobHandle::isDone() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->done;
}

bool JobHandle::waitFor(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(state_->mu);
  return state_->cv.wait_for(lock, timeout, [&] { return state_->done; });
}

JobProgress JobHandle::progress() const { return state_->progress(); }

const std::string& JobHandle::jobId() const { return state_->job.job_id; }

std::string JobHandle::checkpointDirectory() const {
  return state_->checkpoint_storage ? state_->checkpoint_storage->jobDirectory() : std::string();
}

std::string JobHandle::triggerSavepoint(const std::string& target_dir, std::chrono::milliseconds timeout) {
  return state_->savepoint(runtime::checkpoint::CheckpointKind::kSavepoint, target_dir, timeout);
}

std::string JobHandle::stopWithSavepoint(const std::string& target_dir, bool drain, std::chrono::milliseconds timeout) {
  using runtime::checkpoint::CheckpointKind;
  return state_->savepoint(drain ? CheckpointKind::kSavepointTerminate : CheckpointKind::kSavepointSuspend, target_dir,
                           timeout);
}

std::string JobHandle::State::savepoint(runtime::checkpoint::CheckpointKind kind, const std::string& target_dir,
                                        std::chrono::milliseconds timeout) {
  if (!coordinator) {
    // Flink's SchedulerBase: a job without a CheckpointCoordinator "is not a streaming job".
    throw UserError(fmt::format("Job {} is not a streaming job: a BATCH job ('{}') takes no savepoints", job.job_id,
                                options::kRuntimeMode.key()));
  }
  const std::optional<int64_t> id = coordinator->triggerCheckpoint(kind, target_dir);
  if (!id) {
    throw UserError(fmt::format("The savepoint could not start: every task of the job has finished, it is failing "
                                "over, or a source is processing backlog with '{}' = 0",
                                options::kCheckpointingIntervalDuringBacklog.key()));
  }
  return coordinator->awaitCheckpoint(*id, timeout);
}

std::vector<uint16_t> JobHandle::dataPorts() const {
  std::vector<uint16_t> ports;
  for (const auto& t : state_->transports) ports.push_back(t->port());
  return ports;
}

JobExecutionResult JobHandle::wait() {
  {
    std::unique_lock<std::mutex> lock(state_->mu);
    state_->cv.wait(lock, [&] { return state_->done; });
  }
  state_->joinAll();
  if (state_->failure) {
    // Flink's "Job <name> (<id>) switched from state RUNNING to FAILED": the job is named too.
    std::rethrow_exception(withContext(
        state_->failure, fmt::format("Job '{}' ({}) failed: ", state_->job.name, state_->job.job_id)));
  }
  JobExecutionResult r;
  r.job_id = state_->job.job_id;
  r.job_name = state_->job.name;
  r.status = state_->cancel_requested ? JobStatus::kCanceled : JobStatus::kFinished;
  r.wall_time_ms = std::chrono::duration_cast<std::chrono::milliseconds>(state_->end_time - state_->start_time).count();
  r.wall_seconds = std::chrono::duration<double>(state_->end_time - state_->start_time).count();
  r.slots_required = state_->slots_required;
  r.slots_configured = state_->slots_configured;
  r.slots_peak = state_->scheduler->slotPool().peakInUse();
  r.deployed_regions = state_->scheduler->deployedRegions();
  r.task_managers = state_->task_managers;
  r.remote_channels = state_->remote_channels;
  const JobProgress last = state_->progress();
  r.vertices = last.vertices;
  r.num_restarts = last.num_restarts;
  r.checkpoints = last.checkpoints;
  // The retention removed them: the result must not point at a directory that is gone.
  if (r.checkpoints && state_->checkpoints_discarded) r.checkpoints->last_checkpoint_external_path.clear();
  r.restored_in_flight_bytes = state_->restored_in_flight_bytes.load();
  return r;
}

MiniCluster::MiniCluster(Configuration config) : config_(std::move(config)) {}

int MiniCluster::requiredSlots(const graph::JobGraph& job) {
  return scheduler::ExecutionGraph(job).minimumRequiredSlots();
}

int MiniCluster::configuredSlots(const Configuration& config) {
  return config.get(options::kNumberOfTaskSlots) * config.get(options::kNumberOfTaskManagers);
}

scheduler::SlotPoolSettings MiniCluster::slotPoolSettings(const Configuration& config, int required_slots) {
  scheduler::SlotPoolSettings s;
  s.task_managers = config.get(options::kNumberOfTaskManagers);
  if (s.task_managers < 1) {
    throw ConfigError(fmt::format("Invalid value '{}' for configuration key '{}': must be at least 1", s.task_managers,
                                  options::kNumberOfTaskManagers.key()));
  }
  if (config.contains(options::kNumberOfTaskSlots.key())) {
    s.slots_per_task_manager = config.get(options::kNumberOfTaskSlots);
    if (s.slots_per_task_manager < 1) {
      throw ConfigError(fmt::format("Invalid value '{}' for configuration key '{}': must be at least 1",
                                    s.slots_per_task_manager, options::kNumberOfTaskSlots.key()));
    }
  } else {
    // Flink's PerJobMiniClusterFactory: slots per TaskManager = ceil(job requirement / TaskManagers).
    s.slots_per_task_manager = std::max(1, (required_slots + s.task_managers - 1) / s.task_managers);
  }
  const int64_t timeout = config.get(options::kSlotRequestTimeout);
  if (timeout < 0) {
    throw ConfigError(fmt::format("Invalid value '{} ms' for configuration key '{}': must not be negative", timeout,
                                  options::kSlotRequestTimeout.key()));
  }
  s.slot_request_timeout = std::chrono::milliseconds(timeout);
  return s;
}

namespace {

/// Builds one execution attempt of `st->job`: scheduler, gates, network buffers and transports, tasks
/// (restored from `st->restore` when set). Nothing runs yet. Throws ConfigError/UserError when the job
/// cannot be deployed. With `rebuild` (per vertex; region failover) only the gates, partitions, TCP
/// channels and tasks of those vertices are built again, in the attempt's pools and on its transports:
/// their old ones are gone (released by releaseRemoteLinks), and a rebuilt consumer of a kept producer's
/// blocking result reads its spill file again.
void buildAttempt(JobHandle::State* st, const Configuration& cluster_config, const std::vector<char>* rebuild) {
  const graph::JobGraph& g = st->job;
  auto built = [&](size_t v) { return rebuild == nullptr || (*rebuild)[v] != 0; };
  if (rebuild == nullptr) {
    st->execution_graph = std::make_unique<scheduler::ExecutionGraph>(g);
    st->slots_required = st->execution_graph->minimumRequiredSlots();
    const scheduler::SlotPoolSettings slots = MiniCluster::slotPoolSettings(cluster_config, st->slots_required);
    st->slots_configured = slots.totalSlots();
    st->scheduler = std::make_unique<scheduler::PipelinedRegionScheduler>(*st->execution_graph, slots);
    const size_t n = st->execution_graph->executions().size();
    st->threads.resize(n);
    st->execution_running.assign(n, 0);
    st->restarting.assign(n, 0);
    st->execution_attempts.resize(n, 0);
  }


  // Channel layout of every consumer gate: the inputs in order, per input the connected producers ascending.
  // offset[e][j] = first channel of edge e in the gate of consumer subtask j.
  std::vector<std::vector<int>> offset(g.edges.size());
  st->gates.resize(g.vertices.size());
  for (size_t v = 0; v < g.vertices.size(); ++v) {
    const graph::JobVertex& vertex = g.vertices[v];
    st->gates[v].resize(static_cast<size_t>(vertex.parallelism));
    if (vertex.inputs.empty()) continue;
    for (int e : vertex.inputs) offset[static_cast<size_t>(e)].assign(static_cast<size_t>(vertex.parallelism), 0);
    for (int j = 0; j < vertex.parallelism; ++j) {
      int channels = 0;
      for (int e : vertex.inputs) {
        const graph::JobEdge& edge = g.edges[static_cast<size_t>(e)];
        offset[static_cast<size_t>(e)][static_cast<size_t>(j)] = channels;
        channels += static_cast<int>(graph::connectedProducers(edge.partitioner.strategy,
                                                               g.vertices[static_cast<size_t>(edge.source_vertex)].parallelism,
                                                               vertex.parallelism, j)
                                         .size());
      }
      if (built(v)) st->gates[v][static_cast<size_t>(j)] = std::make_unique<runtime::InputGate>(channels);
    }
  }

  // Network buffers: every edge goes through buffers of one NetworkBufferPool per TaskManager. Pipelined
  // edges through PipelinedSubpartitions and input channels; blocking (BATCH) results through spill files
  // (BlockingSubpartition, read back by a SpilledInputChannel once the producer finished). A pipelined channel within one TaskManager (placement below) is a
  // LocalInputChannel, a channel between two a RemoteInputChannel over loopback TCP (each TaskManager has its
  // own transport and partitions).
  // The state backend's keys are read again by every task; checking them here fails the submission with the
  // key named instead of every task at open.
  (void)runtime::state::StateBackendOptions::fromConfiguration(st->config, 0);
  const runtime::network::NetworkBufferConfiguration net = runtime::network::NetworkBufferConfiguration::fromConfiguration(st->config);
  const int task_managers = std::max(1, cluster_config.get(options::kNumberOfTaskManagers));
  auto blocking = [](const graph::JobEdge& edge) { return edge.exchange_mode == graph::ExchangeMode::kBatch; };
  auto networked = [&](const graph::JobEdge& edge) { return !blocking(edge); };
  const int32_t spill_read_buffers = std::max(1, net.buffers_per_channel);
  // Producers' buffers until the first debloat announcement (FLINK-36556).
  const int32_t starting_buffer_size =
      runtime::network::BufferDebloatConfiguration::fromConfiguration(st->config).initialBufferSize();
  // Placement: every slot sharing group takes as many slots as its largest parallelism, groups one after
  // another in vertex order; subtask i of a vertex sits in slot (its group's first slot + i), and slot s
  // in TaskManager s mod local.number-taskmanager. With one group, subtask i runs in TaskManager i mod N.
  std::map<std::string, int> group_first_slot;
  {
    std::vector<std::string> groups;
    std::map<std::string, int> width;
    for (const graph::JobVertex& vertex : g.vertices) {
      if (width.count(vertex.slot_sharing_group) == 0) groups.push_back(vertex.slot_sharing_group);
      width[vertex.slot_sharing_group] = std::max(width[vertex.slot_sharing_group], vertex.parallelism);
    }
    int next_slot = 0;
    for (const std::string& group : groups) {
      group_first_slot[group] = next_slot;
      next_slot += width[group];
    }
  }
  auto taskManagerOf = [&](size_t vertex, int subtask) {
    return (group_first_slot[g.vertices[vertex].slot_sharing_group] + subtask) % task_managers;
  };
  std::vector<int64_t> segments_needed(static_cast<size_t>(task_managers), 0);
  std::vector<int64_t> segments_required(static_cast<size_t>(task_managers), 0);  // the pools' minimums
  for (size_t v = 0; v < g.vertices.size() && rebuild == nullptr; ++v) {
    const graph::JobVertex& vertex = g.vertices[v];
    for (int i = 0; i < vertex.parallelism; ++i) {
      for (int e : vertex.outputs) {
        const graph::JobEdge& edge = g.edges[static_cast<size_t>(e)];
        const int64_t n = static_cast<int64_t>(
            graph::connectedConsumers(edge.partitioner.strategy, vertex.parallelism,
                                      g.vertices[static_cast<size_t>(edge.target_vertex)].parallelism, i)
                .size());
        if (blocking(edge)) {
          // The producer's pool (n + 1 buffers) and each consumer's reading buffers.
          segments_needed[static_cast<size_t>(taskManagerOf(v, i))] += n + 1;
          segments_required[static_cast<size_t>(taskManagerOf(v, i))] += n + 1;
          for (int j : graph::connectedConsumers(edge.partitioner.strategy, vertex.parallelism,
                                                 g.vertices[static_cast<size_t>(edge.target_vertex)].parallelism, i)) {
            const auto consumer_tm = static_cast<size_t>(taskManagerOf(static_cast<size_t>(edge.target_vertex), j));
            segments_needed[consumer_tm] += spill_read_buffers;
            segments_required[consumer_tm] += spill_read_buffers;
          }
          continue;
        }
        segments_needed[static_cast<size_t>(taskManagerOf(v, i))] += std::max(n + 1, n * net.max_buffers_per_channel);
        segments_required[static_cast<size_t>(taskManagerOf(v, i))] += n + 1;
      }
    }
  }
  // Receivers of remote channels: buffers-per-channel exclusive buffers per channel (0: floating buffers only,
  // FLINK-16641) and a pool of floating buffers per gate that always holds one (Flink's required floating
  // buffer, GateBuffersSpec). A local channel's credit is at least 1: Flink's local channels read without
  // credit, Sluice's read against the exclusive count.
  const int32_t exclusive_per_channel = net.buffers_per_channel;
  const int32_t local_credit = std::max(1, net.buffers_per_channel);
  const int32_t floating_per_gate = std::max(1, net.floating_buffers_per_gate);
  for (size_t v = 0; v < g.vertices.size(); ++v) {
    const graph::JobVertex& vertex = g.vertices[v];
    for (int j = 0; j < vertex.parallelism && task_managers > 1; ++j) {
      int64_t remote = 0;
      for (int e : vertex.inputs) {
        const graph::JobEdge& edge = g.edges[static_cast<size_t>(e)];
        if (!networked(edge)) continue;
        for (int i : graph::connectedProducers(edge.partitioner.strategy,
                                               g.vertices[static_cast<size_t>(edge.source_vertex)].parallelism,
                                               vertex.parallelism, j)) {
          remote += taskManagerOf(static_cast<size_t>(edge.source_vertex), i) != taskManagerOf(v, j) ? 1 : 0;
        }
      }
      if (remote > 0) {
        segments_needed[static_cast<size_t>(taskManagerOf(v, j))] += remote * exclusive_per_channel + floating_per_gate;
        segments_required[static_cast<size_t>(taskManagerOf(v, j))] += remote * exclusive_per_channel + 1;
      }
    }
  }
  // A rebuild takes from the attempt's pools, which the torn down vertices gave their buffers back to.
  if (rebuild == nullptr) st->network_pools.resize(static_cast<size_t>(task_managers));
  for (int tm = 0; tm < task_managers && rebuild == nullptr; ++tm) {
    // The configured network memory bounds the pool; only what the job can use is allocated.
    const int64_t configured = net.numberOfSegments(0);
    const int64_t required = segments_required[static_cast<size_t>(tm)];
    if (required > configured) {
      // Fail the submission before any task starts (Flink fails the deployment with the same advice).
      // TaskManagers are numbered from 1, as in the transport's errors.
      throw ConfigError(fmt::format(
          "Insufficient number of network buffers: the job needs at least {} buffers of {} bytes on TaskManager {} "
          "(one per subpartition plus one per result partition, buffers-per-channel per remote input channel plus "
          "one per input gate with remote channels), but "
          "the network memory gives only {} ({} bytes). "
          "Raise 'taskmanager.memory.network.min' and 'taskmanager.memory.network.max' to at least {} bytes, or lower "
          "the parallelism",
          required, net.segment_size, tm + 1, configured, net.networkMemoryBytes(0), required * net.segment_size));
    }
    const int64_t n = std::max<int64_t>(1, std::min(configured, segments_needed[static_cast<size_t>(tm)]));
    st->network_pools[static_cast<size_t>(tm)] =
        std::make_unique<runtime::network::NetworkBufferPool>(static_cast<int32_t>(n), net.segment_size);
  }
  if (task_managers > 1 && rebuild == nullptr) {
    JobHandle::State* raw = st;
    for (int tm = 0; tm < task_managers; ++tm) {
      st->partition_managers.push_back(std::make_unique<runtime::ResultPartitionManager>());
      // A frame carries at most one segment (plus a header well under 64 kb).
      const uint32_t max_frame =
          std::max<uint32_t>(runtime::network::kDefaultMaxFrameLength, static_cast<uint32_t>(net.segment_size) + 65536);
      st->transports.push_back(std::make_unique<runtime::network::TcpConnectionManager>(
          tm, *st->partition_managers.back(), [raw](std::exception_ptr ep) { raw->onTransportFailure(std::move(ep)); },
          max_frame));
      st->transports.back()->start();
    }
  }
  // The floating buffers of gate [vertex][subtask], created with its first remote channel.
  std::map<std::pair<size_t, int>, std::shared_ptr<runtime::network::LocalBufferPool>> floating_pools;
  std::vector<std::shared_ptr<runtime::RemoteInputChannel>> remote_channels;

  bool any_blocking = false;
  for (const graph::JobEdge& edge : g.edges) any_blocking = any_blocking || blocking(edge);
  if (any_blocking && rebuild == nullptr) {
    st->spill_directory = std::make_unique<runtime::SpillDirectory>(options::tmpDirectories(st->config), g.job_id);
  }

  // The byte form of each edge's records; fails the submission when DataStream records that cross the
  // network have no TypeSerializer.
  std::vector<std::shared_ptr<const runtime::ObjectBatchSerializer>> edge_serializers(g.edges.size());
  for (size_t e = 0; e < g.edges.size(); ++e) {
    edge_serializers[e] = runtime::network::edgeRecordSerializer(g, static_cast<int>(e));
  }

  st->tasks.resize(g.vertices.size());
  for (size_t v = 0; v < g.vertices.size(); ++v) {
    const graph::JobVertex& vertex = g.vertices[v];
    if (rebuild == nullptr) st->finished.push_back(std::make_unique<std::atomic<int>>(0));
    if (!built(v)) continue;
    for (int i = 0; i < vertex.parallelism; ++i) {
      runtime::StreamTaskSetup setup;
      setup.job = &g;
      setup.vertex_index = static_cast<int>(v);
      setup.subtask_index = i;
      setup.config = &st->config;
      setup.input_gate = st->gates[v][static_cast<size_t>(i)].get();
      if (!st->restore.empty()) setup.restore = &st->restore[v][static_cast<size_t>(i)];
      if (!st->replay.empty()) setup.replay = &st->replay[v][static_cast<size_t>(i)];
      setup.checkpoint_responder = st->coordinator.get();
      setup.periodic_checkpointing = st->periodic_checkpointing;
      if (st->execution_attempts[static_cast<size_t>(st->execution_graph->executionIndex(static_cast<int>(v), i))] <
          st->fail_attempts) {
        setup.failure = st->failure_injection;
      }
      for (int e : vertex.outputs) {
        const graph::JobEdge& edge = g.edges[static_cast<size_t>(e)];
        const graph::JobVertex& target = g.vertices[static_cast<size_t>(edge.target_vertex)];
        runtime::ResultPartition partition;
        partition.consumer_parallelism = target.parallelism;
        partition.consumer_max_parallelism = target.max_parallelism;
        for (int j : graph::connectedConsumers(edge.partitioner.strategy, vertex.parallelism, target.parallelism, i)) {
          const std::vector<int> producers =
              graph::connectedProducers(edge.partitioner.strategy, vertex.parallelism, target.parallelism, j);
          const int pos = static_cast<int>(std::find(producers.begin(), producers.end(), i) - producers.begin());
          SLUICE_CHECK(pos < static_cast<int>(producers.size()), "inconsistent pointwise connection");
          partition.subpartitions.push_back({st->gates[static_cast<size_t>(edge.target_vertex)][static_cast<size_t>(j)].get(),
                                             offset[static_cast<size_t>(e)][static_cast<size_t>(j)] + pos, j});
        }
        if (blocking(edge) && !partition.subpartitions.empty()) {
          const auto n = static_cast<int32_t>(partition.subpartitions.size());
          // A full buffer is written to the file and recycled at once: one per subpartition and one more.
          partition.pool = st->network_pools[static_cast<size_t>(taskManagerOf(v, i))]->createBufferPool(
              n + 1, n + 1, fmt::format("{} ({}/{}) blocking output {}", vertex.name, i + 1, vertex.parallelism, e));
          st->partition_pools.emplace_back(static_cast<int>(v), partition.pool);
          // A file per attempt: a restarted producer never writes into the file of its earlier attempt.
          const int attempt =
              st->execution_attempts[static_cast<size_t>(st->execution_graph->executionIndex(static_cast<int>(v), i))];
          for (auto& sp : partition.subpartitions) {
            const int j = sp.consumer_subtask;
            sp.blocking = std::make_shared<runtime::BlockingSubpartition>(
                partition.pool, fmt::format("{}/{}-{}-{}.{}.spill", st->spill_directory->path(), e, i, j, attempt),
                edge_serializers[static_cast<size_t>(e)]);
            st->blocking_links[{e, i, j}] = JobHandle::State::BlockingLink{sp.blocking, sp.channel};
            const int consumer_tm = taskManagerOf(static_cast<size_t>(edge.target_vertex), j);
            sp.gate->attachChannel(sp.channel, std::make_shared<runtime::SpilledInputChannel>(
                                                   sp.blocking, *st->network_pools[static_cast<size_t>(consumer_tm)],
                                                   spill_read_buffers));
          }
        }
        if (networked(edge) && !partition.subpartitions.empty()) {
          const auto n = static_cast<int32_t>(partition.subpartitions.size());
          // Flink's ResultPartition pool: one buffer per subpartition plus one guaranteed; at most
          // max-buffers-per-channel per subpartition, so the pool never needs more than their sum.
          partition.pool = st->network_pools[static_cast<size_t>(taskManagerOf(v, i))]->createBufferPool(
              n + 1, std::max(n + 1, n * net.max_buffers_per_channel),
              fmt::format("{} ({}/{}) output {}", vertex.name, i + 1, vertex.parallelism, e));
          // One subpartition may hold at most max-buffers-per-channel of them (a slow consumer cannot
          // starve the others).
          partition.pool->setMaxBuffersPerChannel(n, std::max(1, net.max_buffers_per_channel));
          st->partition_pools.emplace_back(static_cast<int>(v), partition.pool);
          const int producer_tm = taskManagerOf(v, i);
          const std::shared_ptr<const runtime::ObjectBatchSerializer>& objects = edge_serializers[static_cast<size_t>(e)];
          for (size_t k = 0; k < partition.subpartitions.size(); ++k) {
            auto& sp = partition.subpartitions[k];
            const int j = sp.consumer_subtask;
            const int consumer_tm = taskManagerOf(static_cast<size_t>(edge.target_vertex), j);
            const std::string name = fmt::format("{} ({}/{}) -> {} ({}/{})", vertex.name, i + 1, vertex.parallelism,
                                                 target.name, j + 1, target.parallelism);
            if (producer_tm == consumer_tm) {
              sp.pipelined = std::make_shared<runtime::PipelinedSubpartition>(
                  partition.pool, local_credit, /*remote=*/false, name, objects, static_cast<int32_t>(k),
                  starting_buffer_size);
              sp.gate->attachChannel(sp.channel, std::make_shared<runtime::LocalInputChannel>(sp.pipelined));
              continue;
            }
            // The PartitionRequest brings the consumer's credit: the subpartition starts with none.
            sp.pipelined = std::make_shared<runtime::PipelinedSubpartition>(
                partition.pool, 0, /*remote=*/true, name, objects, static_cast<int32_t>(k), starting_buffer_size);
            // Flink's ResultPartitionID names the producer's attempt: a request of a released channel that
            // is still on its way never reaches the partition of the restarted producer.
            const int producer_attempt =
                st->execution_attempts[static_cast<size_t>(st->execution_graph->executionIndex(static_cast<int>(v), i))];
            const std::string partition_id = fmt::format("{}@{}#{}", e, i, producer_attempt);
            st->partition_managers[static_cast<size_t>(producer_tm)]->registerSubpartition(
                partition_id, static_cast<int32_t>(k), sp.pipelined);
            auto& floating = floating_pools[{static_cast<size_t>(edge.target_vertex), j}];
            if (!floating) {
              floating = st->network_pools[static_cast<size_t>(consumer_tm)]->createBufferPool(
                  1, floating_per_gate, fmt::format("{} ({}/{}) input gate", target.name, j + 1, target.parallelism));
              st->partition_pools.emplace_back(edge.target_vertex, floating);
            }
            // Receiver ids carry the consumer's TaskManager (1-based) in their top 16 bits (named in errors).
            const runtime::network::InputChannelId id{static_cast<uint64_t>(consumer_tm + 1) << 48, st->next_receiver++};
            auto channel = std::make_shared<runtime::RemoteInputChannel>(
                name, id, partition_id, static_cast<int32_t>(k),
                st->transports[static_cast<size_t>(consumer_tm)]->partitionRequestClient(
                    producer_tm, st->transports[static_cast<size_t>(producer_tm)]->port()),
                *st->network_pools[static_cast<size_t>(consumer_tm)], *floating, exclusive_per_channel, objects);
            channel->setup();
            sp.gate->attachChannel(sp.channel, channel);
            st->remote_links.push_back(JobHandle::State::RemoteLink{static_cast<int>(v), edge.target_vertex, producer_tm,
                                                                    consumer_tm, partition_id, channel});
            remote_channels.push_back(std::move(channel));
          }
        }
        setup.partitions.push_back(std::move(partition));
      }
      st->tasks[v].push_back(std::make_unique<runtime::StreamTask>(std::move(setup)));
    }
  }

  // A rebuilt consumer of a producer that kept running (finished) reads its complete spill files again,
  // through buffers of its own TaskManager.
  for (const auto& [key, link] : st->blocking_links) {
    if (rebuild == nullptr) break;
    const graph::JobEdge& edge = g.edges[static_cast<size_t>(std::get<0>(key))];
    if (built(static_cast<size_t>(edge.source_vertex)) || !built(static_cast<size_t>(edge.target_vertex))) continue;
    const int consumer = std::get<2>(key);
    const int consumer_tm = taskManagerOf(static_cast<size_t>(edge.target_vertex), consumer);
    st->gates[static_cast<size_t>(edge.target_vertex)][static_cast<size_t>(consumer)]->attachChannel(
        link.channel, std::make_shared<runtime::SpilledInputChannel>(
                          link.subpartition, *st->network_pools[static_cast<size_t>(consumer_tm)], spill_read_buffers));
  }

  // Consumers ask for their remote subpartitions now; the producers' transports serve them as soon as
  // buffers (and credit) are there.
  for (const auto& channel : remote_channels) channel->requestSubpartition(channel);
  st->task_managers = task_managers;
  if (rebuild == nullptr) st->remote_channels = static_cast<int>(remote_channels.size());
}

}  // namespace

std::unique_ptr<JobHandle> MiniCluster::start(const graph::JobGraph& job, const Configuration& config,
                                              SubmitOptions submit) {
  auto st = std::make_shared<JobHandle::State>();
  st->job = job;
  // Flink's JobID: random per submission, so the checkpoints of two runs of one script never share a
  // directory (the plan's own id, deterministic, is what `sluice explain` shows).
  st->job.job_id = randomJobId();
  st->config = config;
  st->cluster_config = config_;
  st->options = std::move(submit);
  st->configureFaultTolerance();
  buildAttempt(st.get(), config_);

  // Every task exists before any thread starts, so cancellation always reaches all of them; the master
  // thread starts them region by region.
  st->start_time = Clock::now();
  JobHandle::State* raw = st.get();
  st->master = std::thread([raw] { raw->runMaster(); });
  if (st->options.on_progress) st->monitor = std::thread([raw] { raw->runMonitor(); });
  return std::make_unique<JobHandle>(std::move(st));
}

JobExecutionResult MiniCluster::execute(const graph::JobGraph& job, const Configuration& config, SubmitOptions options) {
  auto handle = start(job, config, std::move(options));
  return handle->wait();
}

}  // namespace sluice::cluster
