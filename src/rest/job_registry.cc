#include "rest/job_registry.h"

#include <cxxabi.h>

#include <chrono>
#include <cstdlib>
#include <typeinfo>
#include <random>
#include <set>

#include <fmt/format.h>

#include "common/error.h"
#include "graph/job_graph.h"
#include "graph/plan.h"
#include "runtime/checkpoint/checkpoint_storage.h"
#include "rest/messages.h"

namespace sluice::rest {

int64_t currentTimeMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

namespace {

/// 32 random hex digits (Flink's TriggerId is a random 16-byte id).
std::string randomId() {
  static std::mutex mu;
  static std::mt19937_64 rng{std::random_device{}()};
  std::lock_guard<std::mutex> lock(mu);
  return fmt::format("{:016x}{:016x}", rng(), rng());
}

std::string errorMessage(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    return ex.what();
  } catch (...) {
    return "unknown error";
  }
}

/// The error's C++ class, demangled ("sluice::UserError"), as Flink's exceptionName holds the Java class.
std::string errorClass(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    int status = 0;
    char* name = abi::__cxa_demangle(typeid(ex).name(), nullptr, nullptr, &status);
    std::string out = status == 0 && name != nullptr ? name : typeid(ex).name();
    std::free(name);
    return out;
  } catch (...) {
    return "unknown";
  }
}

}  // namespace

struct JobRegistry::Record {
  std::string job_id;
  std::string name;
  bool streaming = true;
  int64_t start_ms = 0;
  int64_t end_ms = -1;
  std::string plan_json;
  std::vector<VertexInfo> vertices;
  std::shared_ptr<cluster::JobHandle> handle;  // null once the job ended
  bool cancel_requested = false;
  std::string final_state;  // empty while running
  cluster::JobProgress final_progress;
  std::string failure;
  std::string failure_class;
  int64_t failure_ms = 0;
  scheduler::SlotPoolSettings slots;
  int slots_required = 0;
  std::vector<uint16_t> data_ports;
  std::chrono::milliseconds savepoint_timeout{0};
  std::string savepoint_dir;  // the job's execution.checkpointing.savepoint-dir (empty: unset)
  std::map<std::string, SavepointOperation> savepoints;
  std::set<std::string> unread_stops;  // triggers of stops whose final result was not read yet
};

JobRegistry::JobRegistry(Configuration cluster_config) : cluster_config_(std::move(cluster_config)) {}

JobRegistry::~JobRegistry() {
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mu_);
    threads.swap(savepoint_threads_);
  }
  for (auto& t : threads) t.join();
}

void JobRegistry::onJobSubmitted(const graph::JobGraph& job, const Configuration& config,
                                 const std::shared_ptr<cluster::JobHandle>& handle) {
  auto r = std::make_shared<Record>();
  r->job_id = handle->jobId();
  r->name = job.name;
  r->streaming = job.runtime_mode != graph::RuntimeMode::kBatch;
  r->start_ms = currentTimeMillis();
  // The handle's id is the submission's (random, as Flink's JobID); the graph carries a deterministic one.
  graph::JobGraph with_id = job;
  with_id.job_id = r->job_id;
  r->plan_json = graph::jobGraphToJson(with_id, -1);
  for (const auto& v : job.vertices) r->vertices.push_back(VertexInfo{v.id, v.name, v.parallelism, v.max_parallelism, v.slot_sharing_group});
  r->handle = handle;
  try {
    r->slots_required = cluster::MiniCluster::requiredSlots(job);
    r->slots = cluster::MiniCluster::slotPoolSettings(config, r->slots_required);
  } catch (const std::exception&) {
    // The cluster accepted the job, so its settings parse; keep the defaults if they somehow do not.
  }
  r->data_ports = handle->dataPorts();
  r->savepoint_timeout = std::chrono::milliseconds(config.get(options::kCheckpointingTimeout));
  r->savepoint_dir = config.getOptional(options::kSavepointDirectory).value_or("");
  std::lock_guard<std::mutex> lock(mu_);
  jobs_.push_back(std::move(r));
}

void JobRegistry::onJobExecuted(const std::string& job_id, const cluster::JobExecutionResult* result,
                                std::exception_ptr failure) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& r : jobs_) {
    if (r->job_id != job_id || !r->handle) continue;
    r->end_ms = currentTimeMillis();
    if (result != nullptr) {
      r->final_state = cluster::jobStatusName(result->status);
      r->final_progress.elapsed_ms = result->wall_time_ms;
      r->final_progress.num_restarts = result->num_restarts;
      r->final_progress.checkpoints = result->checkpoints;
      r->final_progress.vertices = result->vertices;
    } else {
      r->final_state = "FAILED";
      r->failure = errorMessage(failure);
      r->failure_class = errorClass(failure);
      r->failure_ms = r->end_ms;
      r->final_progress = r->handle->progress();
    }
    r->handle.reset();  // a savepoint thread may still hold it
  }
}

JobSnapshot JobRegistry::snapshotLocked(const Record& r, int64_t now_ms) const {
  JobSnapshot s;
  s.job_id = r.job_id;
  s.name = r.name;
  s.streaming = r.streaming;
  s.start_time_ms = r.start_ms;
  s.end_time_ms = r.end_ms;
  s.now_ms = now_ms;
  s.plan_json = r.plan_json;
  s.vertices = r.vertices;
  s.failure = r.failure;
  s.failure_class = r.failure_class;
  s.failure_time_ms = r.failure_ms;
  if (r.handle) {
    s.state = r.cancel_requested ? "CANCELLING" : "RUNNING";
    s.progress = r.handle->progress();
  } else {
    s.state = r.final_state;
    s.progress = r.final_progress;
  }
  return s;
}

ClusterSnapshot JobRegistry::snapshot() const {
  const int64_t now = currentTimeMillis();
  std::lock_guard<std::mutex> lock(mu_);
  ClusterSnapshot c;
  c.task_managers = cluster_config_.get(options::kNumberOfTaskManagers);
  c.slots_per_task_manager = cluster_config_.get(options::kNumberOfTaskSlots);
  for (const auto& r : jobs_) {
    c.jobs.push_back(snapshotLocked(*r, now));
    if (r->handle) {
      c.task_managers = r->slots.task_managers;
      c.slots_per_task_manager = r->slots.slots_per_task_manager;
      c.slots_in_use = r->slots_required;
      c.data_ports = r->data_ports;
    }
  }
  return c;
}

std::optional<JobSnapshot> JobRegistry::job(const std::string& job_id) const {
  const int64_t now = currentTimeMillis();
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& r : jobs_) {
    if (r->job_id == job_id) return snapshotLocked(*r, now);
  }
  return std::nullopt;
}

JobRegistry::CancelOutcome JobRegistry::cancel(const std::string& job_id) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& r : jobs_) {
    if (r->job_id != job_id) continue;
    if (!r->handle) return CancelOutcome::kAlreadyTerminal;
    r->cancel_requested = true;
    r->handle->cancel();  // returns at once
    return CancelOutcome::kAccepted;
  }
  return CancelOutcome::kNotFound;
}

std::optional<std::string> JobRegistry::triggerSavepoint(const std::string& job_id, const std::string& target_dir) {
  return startSavepoint(job_id, target_dir, "target-directory", /*stop=*/false, [target_dir](cluster::JobHandle& handle, std::chrono::milliseconds timeout) {
    return handle.triggerSavepoint(target_dir, timeout);
  });
}

std::optional<std::string> JobRegistry::stopWithSavepoint(const std::string& job_id, const std::string& target_dir,
                                                          bool drain) {
  return startSavepoint(job_id, target_dir, "targetDirectory", /*stop=*/true,
                        [target_dir, drain](cluster::JobHandle& handle, std::chrono::milliseconds timeout) {
    std::string path = handle.stopWithSavepoint(target_dir, drain, timeout);
    // Flink's stop completes once the job terminated; the sources end right after the savepoint.
    if (!handle.waitFor(timeout)) {
      throw UserError(fmt::format("The savepoint {} completed, but the job did not finish within {} ms", path,
                                  timeout.count()));
    }
    return path;
  });
}

std::optional<std::string> JobRegistry::startSavepoint(
    const std::string& job_id, const std::string& target_dir, const char* target_field, bool stop,
    std::function<std::string(cluster::JobHandle&, std::chrono::milliseconds)> take) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& r : jobs_) {
    if (r->job_id != job_id) continue;
    if (!r->handle || r->cancel_requested) {
      throw UserError(fmt::format("Job {} is not running: there is nothing to take a savepoint of", job_id));
    }
    if (!r->streaming) {
      // Flink's SchedulerBase refuses a job without a CheckpointCoordinator; every STREAMING job has one,
      // also without execution.checkpointing.interval.
      throw UserError(fmt::format("Job {} is not a streaming job: a BATCH job ('{}') takes no savepoints", job_id,
                                  options::kRuntimeMode.key()));
    }
    if (target_dir.empty() && r->savepoint_dir.empty()) {
      // Flink's SavepointHandlers answer 400 with this (the REST API has no fallback directory).
      throw ConfigError(fmt::format("Config key [{}] is not set. Property [{}] must be provided.",
                                    options::kSavepointDirectory.key(), target_field));
    }
    const std::string trigger = randomId();
    r->savepoints[trigger] = SavepointOperation{};
    // Counted from the trigger on: a stopped job ends the script (and the server) at once, possibly before
    // this thread recorded the result.
    if (stop) r->unread_stops.insert(trigger);
    savepoint_threads_.emplace_back([this, r, handle = r->handle, trigger, stop, take = std::move(take)] {
      SavepointOperation done;
      try {
        // The handle names the _metadata file; Flink's location is the savepoint's directory.
        done.location = runtime::checkpoint::withoutMetadataFile(take(*handle, r->savepoint_timeout));
        done.status = SavepointOperation::Status::kCompleted;
      } catch (const std::exception& e) {
        done.status = SavepointOperation::Status::kFailed;
        done.failure = e.what();
      }
      std::lock_guard<std::mutex> lock(mu_);
      r->savepoints[trigger] = done;
    });
    return trigger;
  }
  return std::nullopt;
}

bool JobRegistry::awaitResultsRead(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return read_cv_.wait_for(lock, timeout, [&] {
    for (const auto& r : jobs_) {
      if (!r->unread_stops.empty()) return false;
    }
    return true;
  });
}

std::optional<SavepointOperation> JobRegistry::savepoint(const std::string& job_id,
                                                         const std::string& trigger_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& r : jobs_) {
    if (r->job_id != job_id) continue;
    auto it = r->savepoints.find(trigger_id);
    if (it == r->savepoints.end()) return std::nullopt;
    if (it->second.status != SavepointOperation::Status::kInProgress && r->unread_stops.erase(trigger_id) > 0) {
      read_cv_.notify_all();
    }
    return it->second;
  }
  return std::nullopt;
}

}  // namespace sluice::rest
